// One Bangbang node of a cluster; the design of the whole, and what each part was measured at, is
// in docs/scale-out.md. In the first shape of the scale-out the whole deployment is one board
// partition, `p0`, owned by one node at a time through its lease, with `a0`; the others are
// standbys. With `--partitions N` above 1 there are N pairs (`p<k>` with `a<k>`), each leased under
// `p<k>`, and each node owns some.
//
// The node owns its single NATS connection (listing every server, so it moves to a survivor when
// its server dies) and everything built on it: the lease manager for `p0`, the watch of `p0`'s
// lease key that tells who owns it (OwnerDirectory), the partition's journal stream and snapshot
// bucket, and the session secret shared by every node (`session-secret` in `bb-config`, created
// by compare-and-set, so the first two nodes agree on one).
import BangbangApplication
import Cluster
import Crypto
import Foundation
import NATSClient
import PartitionOwner
import Synchronization

package final class ClusterNode: OwnerDirectory {
    /// The one partition of the first step: every campus's boards and every account.
    package static let partition = PartitionID(space: .boards, index: 0)
    /// The account partition, which has a journal of its own and an inbox in a cluster that
    /// started with them (PartitionedStorage.swift); owned with `partition`, under its lease.
    static let accountsPartition = PartitionID(space: .accounts, index: 0)
    static let configBucketName = "bb-config"
    static let sessionSecretKey = "session-secret"
    /// How many pairs the cluster has, written by its first node, checked by every other.
    static let partitionsKey = "partitions"

    /// The cluster's partitions: one of each space, or `--partitions` pairs.
    let map: PartitionMap

    package let localNodeID: String
    let connection: NATSConnection
    let jetStream: JetStream
    /// Copies of every stream and bucket: 3 with a 3-server cluster, fewer with fewer servers.
    let replicas: Int
    let leaseConfiguration: LeaseConfiguration

    private struct State {
        var owner: String?
        /// The revision of the lease entry `owner` comes from: an entry no newer changes nothing.
        var ownerRevision: UInt64 = 0
        var handlers: [@Sendable (String?) -> Void] = []
        var watch: KeyWatch?
        var watchTask: Task<Void, Never>?
        var leases: LeaseManager?
    }
    private let state = Mutex(State())

    init(configuration: ServerConfiguration) {
        localNodeID = configuration.nodeID.isEmpty ? Self.nodeID(fromHostName: ProcessInfo.processInfo.hostName) : configuration.nodeID
        let servers = configuration.natsServers.map { url in
            guard let address = NATSServerAddress(url: url) else { preconditionFailure("--nats \(url) was not checked when it was set") }
            return address
        }
        connection = NATSConnection(configuration: NATSConfiguration(servers: servers, name: "bangbang-\(localNodeID)"))
        jetStream = JetStream(connection: connection)
        replicas = min(3, configuration.natsServers.count)
        leaseConfiguration = Self.leaseConfiguration(for: configuration)
        map = PartitionMap(partitionCount: configuration.partitions)
    }

    /// Whether the pairs are spread over the nodes (`--partitions` above 1).
    var isPartitioned: Bool { map.partitionCount > 1 }

    /// The partitions whose leases the node takes part in: `p0` alone, or every pair's `p<k>`
    /// (the pair's account partition goes with it).
    var leasedPartitions: [PartitionID] {
        isPartitioned ? map.allPartitions.filter { $0.space == .boards } : [Self.partition]
    }

    /// The lease time, and whether the partition moves back to its preferred owner once that node
    /// has been live for `--move-back-ms`. Off by default: with one partition there is nothing to
    /// balance, and the move costs every client a reconnect; an operator turns it on to keep the
    /// owner where the ranking puts it (the holder stops serving cleanly first, and only then
    /// deletes its lease). With several pairs the hand-backs are always on (after a lease time, or
    /// `--move-back-ms`): they are what spreads the pairs over the nodes as they join, and a pair
    /// moving costs no client a reconnect, since every node runs its own clients' sessions.
    static func leaseConfiguration(for configuration: ServerConfiguration) -> LeaseConfiguration {
        let duration = Duration.milliseconds(configuration.leaseMilliseconds)
        if configuration.isPartitioned {
            let grace = Duration.milliseconds(max(configuration.moveBackMilliseconds, configuration.leaseMilliseconds))
            return LeaseConfiguration(duration: duration, handBackGrace: grace, handBacksPerRound: 1)
        }
        guard configuration.moveBackMilliseconds > 0 else { return LeaseConfiguration(duration: duration, handBacksPerRound: 0) }
        let grace = Duration.milliseconds(max(configuration.moveBackMilliseconds, configuration.leaseMilliseconds))
        return LeaseConfiguration(duration: duration, handBackGrace: grace, handBacksPerRound: 1)
    }

    /// A host name as a node id: its first label, with anything but letters, digits, - and _ as -.
    static func nodeID(fromHostName host: String) -> String {
        let label = host.split(separator: ".").first.map(String.init) ?? ""
        let cleaned = String(label.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "-" })
        return cleaned.isEmpty ? "node" : cleaned
    }

    package var currentOwner: String? { state.withLock { $0.owner } }

    package func onOwnerChange(_ handler: @escaping @Sendable (String?) -> Void) {
        state.withLock { $0.handlers.append(handler) }
    }

    /// Connects and waits for JetStream to answer (the cluster has a meta leader), for up to
    /// `timeout`.
    func connect(timeout: Duration = .seconds(30)) async throws {
        try await connection.connect()
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                _ = try await jetStream.accountInfo()
                return
            } catch {
                guard ContinuousClock.now < deadline else { throw ClusterError("JetStream does not answer: \(error)") }
                try await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Starts following the lease key and taking part in the leases; returns what the node
    /// gains and loses.
    /// A failed start may be tried again: the lease key's watch is made once.
    /// `beforeHandingBack` stops serving a partition the node hands back to its preferred owner.
    package func start(beforeHandingBack: (@Sendable (PartitionID) async -> Void)? = nil) async throws -> AsyncStream<LeaseEvent> {
        if state.withLock({ $0.watch == nil }) {
            let bucket = try await PartitionLease.makeBucket(in: jetStream, replicas: replicas)
            let watch = try bucket.watch(Self.partition.description)
            let task = Task { [weak self] in
                for await entry in watch.updates {
                    let owner = entry.operation == .put ? LeaseRecord(decoding: entry.value)?.node : nil
                    self?.noteOwner(owner, revision: entry.revision)
                }
            }
            state.withLock {
                $0.watch = watch
                $0.watchTask = task
            }
        }
        let leases = try await LeaseManager.start(node: localNodeID, map: map, partitions: leasedPartitions,
                                                  jetStream: jetStream, configuration: leaseConfiguration, replicas: replicas,
                                                  beforeHandingBack: beforeHandingBack)
        state.withLock { $0.leases = leases }
        return leases.events
    }

    /// This node took the lease at revision `term`: it is the owner from now, whatever the watch
    /// has yet to deliver. After a NATS server died the watch may be stalled for seconds, or
    /// deliver the old owner's last renewals late; a node that took over must not relay its own
    /// clients to the owner it replaced.
    func noteAcquired(term: UInt64) {
        noteOwner(localNodeID, revision: term)
    }

    private func noteOwner(_ owner: String?, revision: UInt64) {
        let handlers = state.withLock { state -> [@Sendable (String?) -> Void] in
            guard revision > state.ownerRevision else { return [] }
            state.ownerRevision = revision
            guard state.owner != owner else { return [] }
            state.owner = owner
            return state.handlers
        }
        for handler in handlers { handler(owner) }
    }

    /// When one NATS server leads both the leases bucket and the heartbeats bucket, asks the
    /// heartbeats bucket's leader to step down, and returns that server's name. Losing such a
    /// server stops both renewals and heartbeats until both elections end, and an election that
    /// outlasts L then costs a failover: nothing a node can see tells a live holder from a dead
    /// one. Apart, whichever dies, the other keeps landing. A planned step-down elects within about
    /// a second, and the holder's renewals land meanwhile.
    func separateLeaseAndHeartbeatLeaders() async throws -> String? {
        let leases = try await jetStream.streamInfo(KeyValueBucket.streamName(ofBucket: PartitionLease.bucketName)).leader
        let heartbeats = try await jetStream.streamInfo(KeyValueBucket.streamName(ofBucket: LeaseManager.nodesBucketName)).leader
        guard let leases, leases == heartbeats, replicas > 1 else { return nil }
        try await jetStream.stepDownLeader(of: KeyValueBucket.streamName(ofBucket: LeaseManager.nodesBucketName))
        return leases
    }

    /// The journal stream of pair `pair`'s board partition, created if absent.
    func partitionJournal(pair: Int = 0) async throws -> PartitionJournal {
        try await PartitionJournal.create(PartitionID(space: .boards, index: pair), in: jetStream, replicas: replicas)
    }

    /// Waits until the partition's journal, the snapshot bucket and the history stream each have
    /// a stream leader that answers (a stream not made yet answers too), asking every 250 ms with
    /// a 1 s bound, until
    /// `deadline`. Right after a NATS server died they may be electing leaders (4 to 9 s), and
    /// the recovery's own reads, each bounded by the API's 5 s, would find the new leader up to
    /// 5 s late; these probes find it within about a second.
    func awaitStreamLeaders(pair: Int = 0, until deadline: ContinuousClock.Instant) async {
        var probing = jetStream
        probing.timeoutMilliseconds = 1_000
        let boards = PartitionID(space: .boards, index: pair), accounts = PartitionID(space: .accounts, index: pair)
        var waiting = [PartitionJournal.streamName(of: boards), ObjectStore.streamName(ofBucket: SnapshotStore.bucketName),
                       HistoryStream.streamName, PartitionJournal.streamName(of: accounts), PartitionInbox.streamName(of: accounts)]
        while !waiting.isEmpty, ContinuousClock.now < deadline {
            var unanswered: [String] = []
            for stream in waiting {
                do {
                    _ = try await probing.streamInfo(stream)
                } catch .jetStream(let error) where error.errorCode == JetStreamError.streamNotFound {
                } catch {
                    unanswered.append(stream)
                }
            }
            waiting = unanswered
            if !waiting.isEmpty { try? await Task.sleep(for: .milliseconds(250)) }
        }
    }

    /// The account partition's journal and inbox: found, or made when `makingThem` (a cluster
    /// that holds nothing yet, or is importing a single node, starts with them). Nil for a
    /// cluster whose `p0` stream has held every record from the start (it began before them),
    /// which goes on so: its records of both partitions are in one stream, and moving them apart
    /// is an offline migration.
    func accountsPartitionStreams(pair: Int = 0, makingThem: Bool) async throws -> (PartitionJournal, PartitionInbox)? {
        let partition = PartitionID(space: .accounts, index: pair)
        let name = PartitionJournal.streamName(of: partition)
        if !makingThem {
            do {
                _ = try await jetStream.streamInfo(name)
            } catch .jetStream(let error) where error.errorCode == JetStreamError.streamNotFound {
                return nil
            }
        }
        let journal = try await PartitionJournal.create(partition, in: jetStream, replicas: replicas)
        let inbox = try await PartitionInbox.create(partition, in: jetStream, replicas: replicas)
        return (journal, inbox)
    }

    func snapshotStore() async throws -> SnapshotStore {
        try await SnapshotStore.create(in: jetStream, replicas: replicas)
    }

    /// The secret that signs session tokens, the same on every node: read from `bb-config`, or
    /// made and stored there by the first node (by compare-and-set: of two first nodes, the one
    /// that loses reads the winner's).
    /// Two nodes creating the bucket at the same moment may see one creation time out (the
    /// stream exists by then), so a failed attempt is tried again a few times.
    func sessionSecret() async throws -> [UInt8] {
        var attempt = 1
        while true {
            do {
                return try await readOrCreateSessionSecret()
            } catch {
                guard attempt < 4 else { throw error }
                attempt += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Makes `secret` the cluster's: only for a single node's state imported into an empty
    /// cluster, which has issued no session yet, so its users' tokens keep working.
    func replaceSessionSecret(with secret: [UInt8]) async throws {
        let bucket = try await configBucket()
        try await bucket.put(Self.sessionSecretKey, Array(Base64.encode(secret).utf8))
    }

    /// `bb-config`, made if missing.
    private func configBucket() async throws -> KeyValueBucket {
        try await KeyValueBucket.create(Self.configBucketName, in: jetStream, configuration: .init(history: 1, replicas: replicas))
    }

    /// Checks that the cluster has as many pairs as this node was started with: the first node
    /// writes its number into `bb-config`, every other must say the same (a campus or a user must
    /// hash to one partition everywhere). A cluster made before the number was kept has one pair
    /// (`BB_P0` held everything); splitting it is an offline migration. With several pairs, every
    /// pair's inbox is made here, so a pair's events for the users of one no node has taken yet
    /// are kept until that pair is served. Returns why the node cannot join, if it cannot; throws
    /// when NATS does not answer (the caller tries again).
    func agreeOnPartitions() async throws -> String? {
        let bucket = try await configBucket()
        let wanted = map.partitionCount
        for _ in 0..<5 {
            if let entry = try await bucket.get(Self.partitionsKey) {
                guard let kept = Int(String(decoding: entry.value, as: UTF8.self)), kept == wanted else {
                    return "the cluster has \(String(decoding: entry.value, as: UTF8.self)) partition pairs "
                        + "(\(Self.configBucketName)/\(Self.partitionsKey)) and this node was started with "
                        + "--partitions \(wanted); every node of a cluster must be started with the same number"
                }
                break
            }
            if wanted > 1, try await holdsStream(PartitionJournal.streamName(of: Self.partition)) {
                return "the cluster was made with one partition (\(PartitionJournal.streamName(of: Self.partition)) holds "
                    + "everything) and this node was started with --partitions \(wanted); splitting a cluster's "
                    + "partitions is an offline migration (docs/scale-out.md, section 7b)"
            }
            if try await Self.create(Self.partitionsKey, Array(String(wanted).utf8), in: bucket) { break }
        }
        guard isPartitioned else { return nil }
        for pair in 0..<wanted {
            _ = try await PartitionInbox.create(PartitionID(space: .accounts, index: pair), in: jetStream, replicas: replicas)
        }
        return nil
    }

    private func holdsStream(_ name: String) async throws -> Bool {
        do {
            _ = try await jetStream.streamInfo(name)
            return true
        } catch .jetStream(let error) where error.errorCode == JetStreamError.streamNotFound {
            return false
        }
    }

    private func readOrCreateSessionSecret() async throws -> [UInt8] {
        let bucket = try await configBucket()
        for _ in 0..<5 {
            if let entry = try await bucket.get(Self.sessionSecretKey) {
                guard let secret = Base64.decode(String(decoding: entry.value, as: UTF8.self)), secret.count >= 32 else {
                    throw ClusterError("\(Self.configBucketName)/\(Self.sessionSecretKey) is not a valid session secret (32+ bytes, base64)")
                }
                return secret
            }
            let secret = SecureRandom.bytes(count: 32)
            if try await Self.create(Self.sessionSecretKey, Array(Base64.encode(secret).utf8), in: bucket) { return secret }
        }
        throw ClusterError("cannot agree on a session secret in \(Self.configBucketName)")
    }

    /// Whether `value` was written: false when the key already has one (another node came first).
    private static func create(_ key: String, _ value: [UInt8], in bucket: KeyValueBucket) async throws -> Bool {
        do {
            try await bucket.create(key, value)
            return true
        } catch .jetStream(let error) where error.isWrongLastSequence {
            return false
        }
    }

    /// A clean leave: hands the lease back (a standby takes the partition at once), removes the
    /// heartbeat, stops the watch and closes the connection.
    func leave() async {
        let (leases, watch, task) = state.withLock { ($0.leases, $0.watch, $0.watchTask) }
        await leases?.stop()
        watch?.stop()
        task?.cancel()
        await connection.close()
    }
}
