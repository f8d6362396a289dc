// A cluster node (`--nats` given) from start to exit: the I/O around NodeLifecycle (Cluster's
// Node/NodeLifecycle.swift), which decides what the node does about each thing that happens and
// when it must end.
//
// A standby listens with StandbyListener, which relays its `/ws` clients to the owner, and follows
// the cluster's history stream into its archive. When the lease of `p0` is acquired, the
// application is recovered from the object store's snapshot and a replay of the stream (tried
// again for a while if the stream is electing a leader; from the data directory's journal only
// once, when a single node's state is imported into an empty cluster), then the standby listener
// stops and the server starts on the same address. Losing the lease, or an append the stream
// refuses, ends the process with status 75 — asked of the executable through `exitRequests`,
// never by calling `exit` here: crash-only, so the memory of a node that is no longer the owner
// is never served, and a supervisor's restart brings it back as a standby. A clean stop hands the
// lease back, so a standby takes over at once instead of after a lease time. With
// `--move-back-ms`, an owner whose partition ranks another live node first hands it back the same
// way (clients told 1012, a final snapshot, then the key deleted) and exits 75 to come back as a
// standby: the preferred node takes the partition at once.
import BangbangApplication
import BangbangServer
import Cluster
import Dispatch
import Foundation
import Journal
import NATSClient
import OrderArchive
import PartitionOwner
import Synchronization

public final class ClusterRunner: Sendable {
    let configuration: ServerConfiguration
    package let logger: Logger
    let node: ClusterNode
    let standby: StandbyListener
    private let server = Mutex<Server?>(nil)
    /// With several pairs (`--partitions` above 1): the application of each pair this node owns,
    /// served headless (ClusterRunner+Pairs.swift).
    let pairServers = Mutex<[Int: Server]>([:])
    /// The pairs' routed requests, for this node's own sessions to call in the process.
    let localOwners = LocalOwners()
    /// What the node is doing, and what it does next (NodeLifecycle).
    let lifecycle: Mutex<NodeLifecycle>
    /// Where the node says the process must end; the executable exits as asked.
    public let exitRequests = ExitRequests()
    /// The node's order archive, opened at start, followed from the history stream once joined,
    /// and handed to the application when the node takes the partition.
    let history = Mutex<(archive: OrderArchive?, follower: HistoryFollower?)>((nil, nil))
    /// The data directory's `LOCK`, held for the life of the process (set down only while an
    /// import reads the directory's journal, which takes it itself).
    private let directoryLock = Mutex<DataDirectoryLock?>(nil)

    public init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        node = ClusterNode(configuration: configuration)
        lifecycle = Mutex(NodeLifecycle(isPartitioned: node.isPartitioned))
        standby = StandbyListener(configuration: configuration, directory: node, logger: logger)
        if node.isPartitioned {
            standby.extraMetrics.current = { [weak self] in Self.pairMetrics(self?.pairServers.withLock { Array($0.keys) } ?? []) }
        }
    }

    /// Listens as a standby at once, then joins the cluster in the background. Throws when the
    /// address cannot be bound.
    public func start() throws {
        try lockDataDirectory()
        let archive = try Application.openArchive(in: configuration.dataDirectory)
        history.withLock { $0.archive = archive }
        for address in try standby.start() {
            logger.info("standby_listening", ["address": address.description, "port": address.port, "node": node.localNodeID])
        }
        node.onOwnerChange { [logger] owner in logger.info("partition_owner", ["owner": owner ?? "none"]) }
        Task { await run() }
    }

    /// Connects, agrees on the session secret and makes the buckets and streams.
    private func join() async throws -> AsyncStream<LeaseEvent> {
        try await node.connect()
        let deadline = ContinuousClock.now + Self.joinBound
        _ = try await retrying(until: deadline) { try await node.sessionSecret() }
        if let mismatch = try await retrying(until: deadline, { try await node.agreeOnPartitions() }) {
            throw NodeFailure(event: "cluster_partitions_mismatch", detail: mismatch)
        }
        try await retrying(until: deadline) { _ = try await LeaseManager.makeBuckets(in: node.jetStream, replicas: node.replicas) }
        let stream = try await retrying(until: deadline) { try await HistoryStream.open(in: node.jetStream, replicas: node.replicas) }
        history.withLock { history in
            guard let archive = history.archive else { return }
            let follower = HistoryFollower(stream: stream, archive: archive, logger: logger)
            follower.start()
            history.follower = follower
        }
        // The first heartbeat finds no stream leader while the owner has one step down
        // (`ClusterNode.separateLeaseAndHeartbeatLeaders`), which in a new cluster is as others join.
        return try await retrying(until: deadline) {
            try await node.start(beforeHandingBack: { [weak self] partition in await self?.handle(.handBackDue(pair: partition.index)) })
        }
    }

    /// How long a node keeps trying to make or find the cluster's buckets. A NATS cluster that
    /// has just started answers before its meta leader knows every server, and refuses a bucket
    /// with three replicas until then (10005, no suitable peers for placement).
    static let joinBound: Duration = .seconds(30)

    /// Runs `body` until it succeeds, logging `event` and pausing after each failure, until
    /// `deadline`; then the last failure is thrown.
    private func retrying<Value>(until deadline: ContinuousClock.Instant, pause: Duration = .milliseconds(250),
                                 logging event: String = "cluster_join_retrying",
                                 _ body: () async throws -> Value) async throws -> Value {
        while true {
            do {
                return try await body()
            } catch {
                guard ContinuousClock.now + pause < deadline else { throw error }
                logger.warning(event, ["detail": "\(error)"])
                try await Task.sleep(for: pause)
            }
        }
    }

    private func run() async {
        let events: AsyncStream<LeaseEvent>
        do {
            events = try await join()
            try standby.startRelaying(through: node.connection, history: history.withLock { $0.follower },
                                      local: node.isPartitioned ? localOwners : nil)
        } catch let failure as NodeFailure {
            return await handle(.failed(event: failure.event, detail: failure.detail))
        } catch {
            return await handle(.failed(event: "cluster_join_failed", detail: "cannot join the cluster and relay its clients: \(error)"))
        }
        // A node running its clients' sessions takes the operator's admin secret itself.
        if configuration.runsSessionsOnEveryNode {
            do { try AdminSecret.create(in: configuration.dataDirectory) } catch {
                return await handle(.failed(event: "admin_secret_failed", detail: "cannot write the admin secret: \(error)"))
            }
        }
        logger.info("cluster_joined", ["node": node.localNodeID, "nats": configuration.natsServers.joined(separator: ","),
                                       "replicas": node.replicas, "lease_ms": configuration.leaseMilliseconds])
        await handle(.joined)
        for await event in events {
            switch event {
            case .acquired(let partition, let term):
                logger.info("partition_acquired", ["partition": "\(partition)", "term": term])
                await handle(.acquired(pair: partition.index, term: term))
            case .lost(let partition, let reason):
                if reason == .handedBack && node.isPartitioned {
                    logger.info("partition_handed_back", ["partition": "\(partition)", "detail": "moved to its preferred owner; this node serves on"])
                }
                await handle(.lost(pair: partition.index, reason: "\(reason)", handedBack: reason == .handedBack))
            }
            if case .exited = lifecycle.withLock({ $0.phase }) { return }
        }
    }

    /// Tells the lifecycle what happened and does what it says.
    func handle(_ event: NodeLifecycle.Event) async {
        for action in lifecycle.withLock({ $0.handle(event) }) {
            switch action {
            case .recover(let pair, let term):
                if node.isPartitioned {
                    await takePair(pair, term: term)
                } else {
                    node.noteAcquired(term: term)
                    await becomeOwner(term: term)
                }
            case .stopForHandBack(let pair):
                logger.info("partition_handing_back", ["pair": pair, "detail": "its preferred owner is live again"])
                if node.isPartitioned { await stopPair(pair) } else { await stopServingToHandBack() }
                await handle(.stoppedForHandBack(pair: pair))
            case .stopEverything:
                stopEverything()
            case .exit(let status, let event, let detail):
                if action.isFailure {
                    logger.error(event, ["detail": detail, "status": status])
                } else {
                    logger.info(event, ["detail": detail, "status": status])
                }
                exitRequests.request(ExitRequest(status: status, reason: detail))
            }
        }
    }

    /// Whether a clean stop is under way: a lease handed back then is not a loss.
    var isLeaving: Bool { lifecycle.withLock { $0.isLeaving } }

    private func becomeOwner(term: UInt64) async {
        let started = ContinuousClock.now
        do {
            let (archive, follower) = history.withLock { ($0.archive, $0.follower) }
            let holdsLocalState = WriteAheadLog.holdsJournal(in: configuration.dataDirectory)
            var read = try await recoverPair(0) { isEmpty in isEmpty }
            let isEmpty = read.holdsNothing
            let isImport = isEmpty && holdsLocalState
            if holdsLocalState && !isImport {
                logger.warning("partition_import_skipped", ["directory": configuration.dataDirectory,
                                                            "detail": "the data directory holds a single node's journal, but the cluster already holds the partition; the cluster's state is served and the directory's journal is not read"])
            }
            if isImport {
                (read.recovered, read.secret) = try await importLocalState(history: follower?.stream, archive: archive, secret: read.secret)
            }
            let storage = applicationStorage(of: read, pair: 0, isImport: isImport)
            let server = try await makeServer(configuration, storage: storage)
            try AdminSecret.create(in: configuration.dataDirectory)
            standby.stop()
            try await startListening(server)
            try server.enableRelay(directory: node, connection: node.connection)
            // `a0` is held with `p0`, whether or not it has a journal of its own.
            try serveOwned(pair: 0, on: server)
            self.server.withLock { $0 = server }
            logServing(read, pair: 0, term: term, since: started)
            Task { await keepLeaseAndHeartbeatLeadersApart() }
            await handle(.recovered(pair: 0))
        } catch {
            await handle(.recoveryFailed(pair: 0, detail: "\(error)"))
        }
    }

    /// The application recovered into a server, on a thread of its own: recovery blocks (the
    /// replay, the inbox's catch-up) for a second or more, and on the tasks' pool it would hold
    /// up the lease renewals of every partition this node holds.
    func makeServer(_ configuration: ServerConfiguration, storage: ApplicationStorage) async throws -> Server {
        let logger = logger
        let exits = exitRequests
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try Server(configuration: configuration, logger: logger, clock: WallClock.now,
                                                              exits: exits, storage: storage) })
            }
        }
    }

    /// What a node read of pair `pair`'s partitions when it took them.
    package struct PairRead {
        var journal: PartitionJournal
        var snapshots: SnapshotStore
        var recovered: RecoveredLog
        var last: JournalEnd
        var secret: [UInt8]
        var accounts: (journal: PartitionJournal, recovered: RecoveredLog, last: JournalEnd)?

        var holdsNothing: Bool {
            func empty(_ log: RecoveredLog, _ last: JournalEnd) -> Bool {
                log.snapshot == nil && log.records.isEmpty && last.message == 0
            }
            return empty(recovered, last) && accounts.map { empty($0.recovered, $0.last) } ?? true
        }
    }

    /// Reads pair `pair`'s snapshots and streams, trying again while their streams elect leaders;
    /// `makesAccountsStreams` says, given whether the board partition holds nothing, whether the
    /// account partition's streams are made when missing.
    func recoverPair(_ pair: Int, makesAccountsStreams: @escaping (Bool) -> Bool) async throws -> PairRead {
        let follower = history.withLock { $0.follower }
        return try await retryingRecovery(pair: pair) {
            // The archive first holds everything earlier owners moved out of memory.
            try await follower?.catchUp()
            let journal = try await node.partitionJournal(pair: pair)
            let snapshots = try await node.snapshotStore()
            let (recovered, last) = try await StreamJournal.recover(journal, from: snapshots)
            let isEmpty = recovered.snapshot == nil && recovered.records.isEmpty && last.message == 0
            var read = PairRead(journal: journal, snapshots: snapshots, recovered: recovered, last: last,
                                // Read again: an import may have replaced the one read at join.
                                secret: try await node.sessionSecret())
            if let (accountsJournal, _) = try await node.accountsPartitionStreams(pair: pair, makingThem: makesAccountsStreams(isEmpty)) {
                let (accountsRecovered, accountsLast) = try await StreamJournal.recover(accountsJournal, from: snapshots)
                read.accounts = (accountsJournal, accountsRecovered, accountsLast)
            }
            return read
        }
    }

    /// What the application of pair `pair` is made from: its streams (the stream journals on the
    /// publishing queue) and what was read of them, the cluster's session secret, the node's
    /// archive, and the shared history stream the archiver publishes each batch to first.
    func applicationStorage(of read: PairRead, pair: Int, isImport: Bool) -> ApplicationStorage {
        let (archive, follower) = history.withLock { ($0.archive, $0.follower) }
        var storage = ApplicationStorage.journal(recovered: read.recovered, sessionSecret: read.secret) { [self] queue, observer in
            let journal = streamJournal(read.journal, snapshots: read.snapshots, end: read.last,
                                        snapshotRevision: read.recovered.snapshotRevision, completionQueue: queue)
            journal.observeBatches(observer)
            return journal
        }
        storage.archive = archive
        storage.isImport = isImport
        if let stream = follower?.stream { storage.beforeArchiving = { records in try stream.publishBlocking(records) } }
        if let accounts = read.accounts {
            let (jetStream, map) = (node.jetStream, node.map)
            storage.accountsPartition = AccountsPartitionStorage(recovered: accounts.recovered, makeJournal: { [self] queue, observer in
                let journal = streamJournal(accounts.journal, snapshots: read.snapshots, end: accounts.last,
                                            snapshotRevision: accounts.recovered.snapshotRevision, completionQueue: queue)
                journal.observeBatches(observer)
                return journal
            }, linkInbox: { parameters in InboxWiring.make(parameters, jetStream: jetStream, map: map) })
        }
        storage.partitionCount = node.map.partitionCount
        storage.pair = pair
        return storage
    }

    /// Answers what other nodes route to pair `pair`'s partitions and publishes what they number.
    @discardableResult
    func serveOwned(pair: Int, on server: Server) throws -> OwnerRequests {
        let boards = PartitionID(space: .boards, index: pair), accounts = PartitionID(space: .accounts, index: pair)
        let owner = try server.serveRoutedRequests(for: [boards, accounts], of: node.map, connection: node.connection)
        try server.hearWatchingReports(on: node.connection)
        server.publishPersonalEvents(for: [accounts], on: node.connection)
        server.publishFeedEvents(for: boards, on: node.connection)
        return owner
    }

    func logServing(_ read: PairRead, pair: Int, term: UInt64, since started: ContinuousClock.Instant) {
        logger.info("partition_serving", ["term": term, "snapshot_sequence": read.recovered.snapshotSequence,
                                          "records": read.recovered.records.count, "journal_sequence": read.last.record,
                                          "journal_message": read.last.message,
                                          "accounts_journal_sequence": read.accounts.map { "\($0.last.record)" } ?? "none (one journal)",
                                          "pair": pair, "ms": Int((ContinuousClock.now - started).seconds * 1000)])
    }

    /// A partition's stream as the application's journal: a publish with no definite answer is
    /// logged as it is tried again, and a fenced append ends the node (crash-only).
    func streamJournal(_ journal: PartitionJournal, snapshots: SnapshotStore, end: JournalEnd,
                       snapshotRevision: UInt64, completionQueue: DispatchQueue) -> StreamJournal {
        let logger = logger
        return StreamJournal(journal: journal, snapshots: snapshots, nodeID: node.localNodeID, end: end,
                             snapshotRevision: snapshotRevision, completionQueue: completionQueue, onRetry: { news in
                                 switch news {
                                 case .started(let why):
                                     logger.warning("journal_retrying", ["partition": "\(journal.partition)", "detail": "no definite answer for \(why); publishing again with the same message id"])
                                 case .settled(let duration, let rounds):
                                     logger.info("journal_retried", ["partition": "\(journal.partition)", "ms": Int(duration.seconds * 1000), "rounds": rounds])
                                 }
                             }) { [weak self] why in
            Task { await self?.handle(.fenced(pair: journal.partition.index, detail: "\(why)")) }
        }
    }

    /// While this node owns the partition (for the rest of the process), every
    /// `leaderCheckInterval` it keeps the leases and heartbeats buckets led by different NATS
    /// servers (`ClusterNode.separateLeaseAndHeartbeatLeaders`). Only the owner does it, so two
    /// nodes never step the same leader down together. A failed check is tried at the next one.
    func keepLeaseAndHeartbeatLeadersApart(while holds: @Sendable () -> Bool = { true }) async {
        while !isLeaving && holds() {
            do {
                if let server = try await node.separateLeaseAndHeartbeatLeaders() {
                    logger.info("cluster_leaders_separated", ["server": server, "detail": "\(LeaseManager.nodesBucketName) and \(PartitionLease.bucketName) were led by one NATS server; \(LeaseManager.nodesBucketName)'s leader stepped down"])
                }
            } catch {
                logger.debug("cluster_leader_check_failed", ["detail": "\(error)"])
            }
            try? await Task.sleep(for: Self.leaderCheckInterval)
        }
    }

    static let leaderCheckInterval: Duration = .seconds(2)

    /// The first owner of a cluster that holds no state for the partition, started on a data
    /// directory where a node ran on its own, makes that node's state the cluster's: an operator
    /// moves a single-node deployment into a cluster by restarting it with `--nats` on the same
    /// directory. Its archive goes into the history stream first, then its session secret into
    /// `bb-config` (so its users' tokens keep working), and the application recovered from its
    /// journal stores a snapshot in the object store before it serves: that snapshot is the
    /// import's commit point. A failure before it leaves the cluster empty, and the next start
    /// imports again (the history stream takes the orders twice; following stores them once).
    private func importLocalState(history: HistoryStream?, archive: OrderArchive?,
                                  secret: [UInt8]) async throws -> (RecoveredLog, [UInt8]) {
        logger.info("partition_import_started", ["directory": configuration.dataDirectory])
        // The journal takes the directory's lock itself: this node's lock is set down meanwhile.
        directoryLock.withLock { $0 = nil }
        let (local, recovery) = try WriteAheadLog.open(directory: configuration.dataDirectory)
        try local.close()
        try lockDataDirectory()
        let recovered = RecoveredLog(recovery)
        var archived = 0
        if let history, let archive { archived = try await history.publishAll(of: archive) }
        var secret = secret
        if let local = try SecretFile.load(in: configuration.dataDirectory) {
            try await node.replaceSessionSecret(with: local)
            secret = local
        }
        logger.info("partition_import_read", ["snapshot_sequence": recovered.snapshotSequence, "records": recovered.records.count,
                                              "archived_orders": archived])
        return (recovered, secret)
    }

    /// How long a new owner keeps trying to read its partition: the stream or the snapshot
    /// bucket may be electing a leader (a NATS server died with the old owner, or just before),
    /// and the replay's consumer waits for the meta leader; 10 to 25 s were seen after a kill.
    static let recoveryBound: Duration = .seconds(30)

    /// Runs `recover` once pair `pair`'s streams have leaders, until it succeeds or
    /// `recoveryBound` ends.
    func retryingRecovery<Value>(pair: Int, _ recover: () async throws -> Value) async throws -> Value {
        let deadline = ContinuousClock.now + Self.recoveryBound
        return try await retrying(until: deadline, pause: .milliseconds(500), logging: "partition_recovery_retrying") {
            await node.awaitStreamLeaders(pair: pair, until: deadline)
            return try await recover()
        }
    }

    /// Takes the data directory's `LOCK`, as the local journal does, for the life of the
    /// process: the node's archive and administrator secret are there, and a second server on
    /// the same directory is refused.
    private func lockDataDirectory() throws {
        let lock = try DataDirectoryLock(directory: configuration.dataDirectory)
        directoryLock.withLock { $0 = lock }
    }

    /// The standby's listening socket closes on its queue shortly after `stop`; until then the
    /// address is taken, so binding is tried again for up to a second.
    private func startListening(_ server: Server) async throws {
        var attempts = 0
        while true {
            do {
                _ = try server.start()
                return
            } catch {
                attempts += 1
                guard attempts < 50 else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Before the lease manager hands the partition back to its preferred owner: serving ends as
    /// on a clean stop, with clients told 1012 (come back: they reconnect to any node and resume).
    /// A hand-back due while the partition is still being recovered waits until it is served, so
    /// the stop is the one clean sequence (a failed recovery ends the process instead).
    private func stopServingToHandBack() async {
        var server: Server?
        while !isLeaving && !Task.isCancelled {
            server = takeServer()
            if server != nil { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        guard let server else { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                server.shutdown(closing: .serviceRestart, reason: "partition moving to another node")
                done.resume()
            }
        }
    }

    /// The server, for the one caller that stops it.
    private func takeServer() -> Server? {
        server.withLock { server in defer { server = nil }; return server }
    }

    /// A clean stop (SIGTERM): serving ends as in single-node mode (clients told 1001, a final
    /// snapshot), then the leases are handed back. Blocks; the caller exits 0 after it.
    public func shutdown() {
        let actions = lifecycle.withLock { $0.handle(.stopRequested) }
        guard actions.contains(.stopEverything) else { return }
        stopEverything()
    }

    private func stopEverything() {
        history.withLock { $0.follower }?.stop()
        let isHandingBack = lifecycle.withLock { $0.pairs.values.contains { if case .handingBack = $0 { true } else { false } } }
        if node.isPartitioned {
            standby.stop()
            stopEveryPair()
        } else if let server = takeServer() {
            server.shutdown()
        } else if !isHandingBack {
            standby.stop()
        }
        // Else a hand-back has the server and is stopping it: leaving waits for that round.
        let node = node
        _ = try? blocking { await node.leave() }
    }

    /// SIGHUP: as in single-node mode, once serving.
    public func reload(_ new: ServerConfiguration) throws -> [String] {
        guard let server = server.withLock({ $0 }) else { return [] }
        return try server.reload(new)
    }
}

/// A reason the node cannot join, with the log event that names it.
private struct NodeFailure: Error {
    let event: String
    let detail: String
}
