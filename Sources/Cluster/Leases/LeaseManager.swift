// The I/O shell around LeaseTable and NodeLiveness: one per Bangbang node. It announces the node
// (a heartbeat key in the nodes bucket, rewritten every L/3), watches the leases and nodes
// buckets, and every tick (L/12) performs what LeasePlanner asks: takes, renewals, hand-backs,
// probes. Two loops share the actor: the rounds, which make the lease requests one at a time
// and may wait out a request's bound, and the clock, which never waits on NATS: every tick it
// starts the heartbeat when due and abandons what is past its serving deadline, so neither is
// ever held up by a lease request waiting on a bucket with no leader. Each lease request's
// outcome goes to the table as an answer (stored, refused, read) or as none (timeout, no
// responders, a lost connection): that is how the planner tells a bucket electing a leader from
// a lease taken by someone else.
// What the node gains and loses comes out of `events`, in order; a partition is the node's to
// serve between its `.acquired` and its `.lost` (after replaying its journal: acquiring a lease
// does not make the node's state current, PartitionJournal does). A hand-back first lets the
// node stop serving the partition (`beforeHandingBack`), and only then deletes the key: the next
// owner takes it at once, and finds everything the last one did in its journal and snapshot. The
// stop runs beside the rounds, which go on renewing every lease held (the one being handed back
// too, until it is deleted): a node holding many partitions keeps them while one stops.
//
// Every decision is made by the table from what was read; this file only moves bytes. Lease writes
// are made one at a time by the rounds, so the table sees outcomes in the order they happened. Each
// is bounded well under L (LeaseConfiguration.writeTimeoutMilliseconds), so when a NATS server
// dies a lost renewal is simply made again at the next tick; one whose outcome was lost but that
// was stored shows up on the watch (or the re-read after a refused renewal) as this node's own.
import NATSClient

public actor LeaseManager {
    public nonisolated let node: String
    public nonisolated let map: PartitionMap
    public nonisolated let partitions: [PartitionID]
    public nonisolated let configuration: LeaseConfiguration
    /// Gains and losses, in order.
    public nonisolated let events: AsyncStream<LeaseEvent>
    private let continuation: AsyncStream<LeaseEvent>.Continuation
    /// Reads and writes, each bounded by `writeTimeoutMilliseconds`.
    private let leases: KeyValueBucket
    private let nodes: KeyValueBucket
    /// The same buckets with the API's own timeout, for making their watches.
    private let watchedLeases: KeyValueBucket
    private let watchedNodes: KeyValueBucket
    private var table: LeaseTable
    private var liveness: NodeLiveness
    private var watches: [KeyWatch] = []
    private var nodesWatch: KeyWatch?
    /// When the last direct read of every known node's heartbeat (made while the watch of the
    /// nodes bucket is stalled) began.
    private var lastHeartbeatRead: ContinuousClock.Instant?
    private var tasks: [Task<Void, Never>] = []
    private var rounds: Task<Void, Never>?
    /// Every tick: the heartbeat when due, and the abandons.
    private var clock: Task<Void, Never>?
    /// The heartbeat write under way.
    private var heartbeatWrite: Task<Void, Never>?
    private var lastHeartbeat: ContinuousClock.Instant?
    private var isRunning = false
    /// Run before a handed-back partition's key is deleted: the holder stops serving it.
    private let beforeHandingBack: (@Sendable (PartitionID) async -> Void)?
    /// The partitions whose holder is stopping to hand them back, and each stop.
    private var handingBack: [PartitionID: Task<Void, Never>] = [:]

    /// The bucket of the nodes' heartbeats.
    public static let nodesBucketName = "bb-nodes"

    /// The names of the two buckets: a deployment's are `standard`; tests sharing one NATS
    /// cluster give each test buckets of its own.
    public struct BucketNames: Sendable, Equatable {
        public var leases: String
        public var nodes: String
        public init(leases: String, nodes: String) {
            self.leases = leases
            self.nodes = nodes
        }
        public static let standard = BucketNames(leases: PartitionLease.bucketName, nodes: LeaseManager.nodesBucketName)
    }

    /// Makes (or finds) both buckets, reads every lease once and starts the rounds.
    public static func start(node: String, map: PartitionMap, partitions: [PartitionID]? = nil, jetStream: JetStream,
                             configuration: LeaseConfiguration = LeaseConfiguration(),
                             replicas: Int = 3, buckets: BucketNames = .standard,
                             beforeHandingBack: (@Sendable (PartitionID) async -> Void)? = nil) async throws(NATSClientError) -> LeaseManager {
        let (leases, nodes) = try await makeBuckets(in: jetStream, replicas: replicas, names: buckets)
        let manager = LeaseManager(node: node, map: map, partitions: partitions ?? map.allPartitions,
                                   configuration: configuration, leases: leases, nodes: nodes,
                                   beforeHandingBack: beforeHandingBack)
        do {
            try await manager.run()
        } catch {
            // Nothing of a failed start keeps running, so the caller may start again.
            await manager.halt()
            throw error
        }
        return manager
    }

    /// Makes (or finds) the leases and the nodes buckets.
    public static func makeBuckets(in jetStream: JetStream, replicas: Int = 3, names: BucketNames = .standard) async throws(NATSClientError)
        -> (leases: KeyValueBucket, nodes: KeyValueBucket) {
        let leases = try await PartitionLease.makeBucket(in: jetStream, name: names.leases, replicas: replicas)
        var nodesConfiguration = KeyValueBucket.Configuration(history: 1, replicas: replicas)
        // A dead node's key goes by itself after a while; liveness itself is timed by watching.
        nodesConfiguration.maxAgeNanoseconds = 600_000_000_000
        let nodes = try await KeyValueBucket.create(names.nodes, in: jetStream, configuration: nodesConfiguration)
        return (leases, nodes)
    }

    private init(node: String, map: PartitionMap, partitions: [PartitionID], configuration: LeaseConfiguration,
                 leases: KeyValueBucket, nodes: KeyValueBucket, beforeHandingBack: (@Sendable (PartitionID) async -> Void)?) {
        self.beforeHandingBack = beforeHandingBack
        precondition(PartitionLease.isValidNodeID(node), "a node id is letters, digits, - and _")
        self.node = node
        self.map = map
        self.partitions = partitions
        self.configuration = configuration
        watchedLeases = leases
        watchedNodes = nodes
        self.leases = leases.bounded(toMilliseconds: configuration.writeTimeoutMilliseconds)
        self.nodes = nodes.bounded(toMilliseconds: configuration.writeTimeoutMilliseconds)
        table = LeaseTable(node: node, configuration: configuration)
        liveness = NodeLiveness(duration: configuration.duration)
        (events, continuation) = AsyncStream<LeaseEvent>.makeStream()
    }

    /// The partitions this node holds now.
    public var held: Set<PartitionID> { Set(table.holdings.keys) }

    /// The nodes seen live now.
    public var liveNodes: Set<String> { Set(currentlyLiveNodes().keys).union([node]) }

    /// Whether the leases bucket answers this node's requests now (for logs and tests).
    public var leaseBucket: LeaseBucketState { table.bucket }

    /// The live nodes as of L/3 after the heartbeats were last heard (by the watch of the nodes
    /// bucket, or by reading them), if that is earlier than now: while the watch is stalled (its
    /// consumer's NATS server died) and the bucket cannot be read either (it is electing a
    /// leader), the heartbeats missed may well have been written, so nobody is counted dead for
    /// them. A live node's last heartbeat seen is at most about L/3 older than that, so L/3 more
    /// leaves it live with L/3 to spare. Once heartbeats are heard again the clock runs again.
    private func currentlyLiveNodes() -> [String: ContinuousClock.Instant] {
        let now = ContinuousClock.now
        guard let watched = nodesWatch?.lastHeard else { return liveness.liveNodes(now: now) }
        let heard = max(watched, lastHeartbeatRead ?? watched)
        return liveness.liveNodes(now: min(now, heard + configuration.renewInterval))
    }

    /// While the watch of the nodes bucket has been silent for two of its heartbeats (its
    /// consumer died with a NATS server, and making another waits for the meta leader), reads
    /// every known node's heartbeat key from the bucket's leader instead, so a node that died
    /// meanwhile (with that very server, say) is not kept live by a watch that cannot hear.
    private func readHeartbeatsWhileTheWatchIsSilent() async {
        let startedAt = ContinuousClock.now
        guard let heard = nodesWatch?.lastHeard, startedAt - heard > Self.silentWatch else { return }
        for key in liveness.knownNodes {
            do {
                // A key gone (aged out) has nothing new to tell.
                guard let entry = try await nodes.latest(key) else { continue }
                liveness.observe(key, revision: entry.revision, isDeleted: entry.operation != .put, now: .now)
            } catch {
                // A read that fails proves nothing: the clock stays where the last heard left it.
                return
            }
        }
        lastHeartbeatRead = startedAt
    }

    static let silentWatch: Duration = .seconds(2)

    private func run() async throws(NATSClientError) {
        isRunning = true
        // The first write may wait for the buckets' streams to settle: the API's own timeout.
        try await heartbeat(in: watchedNodes)
        for (bucket, isLeases) in [(watchedLeases, true), (watchedNodes, false)] {
            let watch = try bucket.watch(">")
            watches.append(watch)
            if !isLeases { nodesWatch = watch }
            tasks.append(Task { [weak self] in
                for await entry in watch.updates {
                    guard let self else { return }
                    await self.receive(entry, isLease: isLeases)
                }
            })
        }
        // The watch shows only keys that exist; a key never written must be read to be known absent.
        for partition in partitions { await reread(partition) }
        let tick = configuration.tickInterval
        rounds = Task { [weak self] in
            while !Task.isCancelled {
                guard let self, await self.round() else { return }
                try? await Task.sleep(for: tick)
            }
        }
        clock = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                await self.everyTick()
                try? await Task.sleep(for: tick)
            }
        }
    }

    /// Hands back every held lease, removes the heartbeat and stops: a clean leave, so others
    /// take the partitions at once instead of after L.
    public func stop() async {
        guard isRunning else { return }
        // A hand-back under way ends first: its partition is released once its holder stopped.
        for stopping in Array(handingBack.values) { await stopping.value }
        let inFlight = (rounds, heartbeatWrite)
        halt()
        // A write of the round under way finishes first, so its outcome is in the table; and a
        // heartbeat under way, so it cannot land after the key's delete below.
        await inFlight.0?.value
        await inFlight.1?.value
        for holding in table.holdings.values.sorted(by: { $0.partition < $1.partition }) {
            emit(table.release(holding.partition, reason: .handedBack))
            try? await lease(of: holding.partition).release(holding)
        }
        _ = try? await nodes.delete(node)
        continuation.finish()
    }

    /// Stops every read and write without telling anyone: to the others it looks like a crash,
    /// and the leases expire after L.
    public func halt() {
        isRunning = false
        for task in tasks { task.cancel() }
        tasks.removeAll()
        for stopping in handingBack.values { stopping.cancel() }
        handingBack.removeAll()
        rounds?.cancel()
        rounds = nil
        clock?.cancel()
        clock = nil
        for watch in watches { watch.stop() }
        watches.removeAll()
        nodesWatch = nil
    }

    /// Ends the watch of the nodes bucket as a dead consumer would, with nothing heard after:
    /// for tests of what a node does while that watch is silent.
    func silenceNodesWatch() {
        nodesWatch?.stop()
    }

    private func receive(_ entry: KeyValueEntry, isLease: Bool) {
        let value = entry.operation == .put ? entry.value : nil
        if isLease {
            guard let partition = Self.partition(named: entry.key, count: map.partitionCount) else { return }
            emit(table.observe(partition, value: value, revision: entry.revision, now: .now))
        } else {
            liveness.observe(entry.key, revision: entry.revision, isDeleted: value == nil, now: .now)
        }
    }

    /// One tick; false once stopped. Once a lease request's outcome is unknown (the leases
    /// bucket is electing a leader, say) the round's other requests are left to the next tick,
    /// where they would only wait out their bounds one after another; abandons are still made.
    private func round() async -> Bool {
        guard isRunning else { return false }
        await readHeartbeatsWhileTheWatchIsSilent()
        let actions = table.plan(map: map, partitions: partitions, liveNodes: currentlyLiveNodes(),
                                 lastHeartbeat: lastHeartbeat, handingBack: Set(handingBack.keys), now: .now)
        var requestsStalled = false
        for action in actions {
            guard isRunning else { return false }
            if case .abandon = action {
                await perform(action)
            } else if !requestsStalled {
                requestsStalled = !(await perform(action))
            }
        }
        return isRunning
    }

    /// The clock's tick. The heartbeat goes every L/3 whatever the leases bucket does (an attempt
    /// without an answer is made again the tick after its bound); a holding past its serving
    /// deadline is given up within a tick of it, even while a round waits on a request.
    private func everyTick() {
        guard isRunning else { return }
        for case .abandon(let partition) in table.plan(map: map, partitions: partitions, liveNodes: currentlyLiveNodes(),
                                                       lastHeartbeat: lastHeartbeat, handingBack: Set(handingBack.keys), now: .now) {
            emit(table.release(partition, reason: .expired))
        }
        guard heartbeatWrite == nil,
              lastHeartbeat.map({ ContinuousClock.now - $0 >= configuration.renewInterval }) ?? true else { return }
        heartbeatWrite = Task { [weak self] in
            guard let self else { return }
            try? await self.heartbeat()
            await self.heartbeatWritten()
        }
    }

    private func heartbeatWritten() {
        heartbeatWrite = nil
    }

    private func heartbeat(in bucket: KeyValueBucket? = nil) async throws(NATSClientError) {
        let startedAt = ContinuousClock.now
        try await (bucket ?? nodes).put(node, Array("{\"node\":\"\(node)\"}".utf8))
        lastHeartbeat = startedAt
    }

    /// Returns false when a request's outcome is unknown.
    @discardableResult
    private func perform(_ action: LeaseAction) async -> Bool {
        switch action {
        case .take(let partition):
            return await take(partition) { lease async throws(LeaseError) in try await lease.take() }
        case .takeOver(let partition, let revision):
            return await take(partition) { lease async throws(LeaseError) in try await lease.takeOver(from: revision) }
        case .renew(let partition, _):
            guard let holding = table.holdings[partition] else { return true }
            let partitionLease = lease(of: partition)
            let startedAt = ContinuousClock.now
            do {
                let renewed = try await partitionLease.renew(holding)
                table.renewed(partition, revision: renewed.revision, startedAt: renewed.renewedAt,
                              value: partitionLease.value(term: holding.term), now: .now)
            } catch .heldElsewhere {
                table.answered(startedAt: startedAt, now: .now)
                return await reread(partition)
            } catch {
                // Unknown outcome: the next renewal (or the watch) tells.
                table.unanswered(startedAt: startedAt)
                return false
            }
        case .probe(let partition):
            return await reread(partition)
        case .handBack(let partition, _):
            guard table.holdings[partition] != nil, handingBack[partition] == nil else { return true }
            let stop = beforeHandingBack
            handingBack[partition] = Task { [weak self] in
                await stop?(partition)
                await self?.finishHandingBack(partition)
            }
        case .abandon(let partition):
            emit(table.release(partition, reason: .expired))
        }
        return true
    }

    /// Once the holder stopped serving `partition`: its key is deleted, then the loss reported.
    private func finishHandingBack(_ partition: PartitionID) async {
        handingBack[partition] = nil
        // Taken by another while it stopped (an expiry), or stopped meanwhile: nothing to release.
        guard isRunning, let holding = table.holdings[partition] else { return }
        let released = table.release(partition, reason: .handedBack)
        // Deleted before it is reported, so a node that ends on the report has handed it back.
        let startedAt = ContinuousClock.now
        do {
            try await lease(of: partition).release(holding)
            table.answered(startedAt: startedAt, now: .now)
        } catch .heldElsewhere {
            table.answered(startedAt: startedAt, now: .now)
        } catch {
            table.unanswered(startedAt: startedAt)
        }
        emit(released)
    }

    private func take(_ partition: PartitionID, _ write: (PartitionLease) async throws(LeaseError) -> LeaseHolding) async -> Bool {
        let partitionLease = lease(of: partition)
        let startedAt = ContinuousClock.now
        do {
            let holding = try await write(partitionLease)
            emit(table.took(partition, revision: holding.revision, startedAt: holding.renewedAt,
                            value: partitionLease.value(term: 0), now: .now))
        } catch .heldElsewhere {
            table.answered(startedAt: startedAt, now: .now)
            return await reread(partition)
        } catch {
            // Unknown outcome: if it was stored, the watch shows this node's own entry, and the
            // lease (naming this node, not held) is taken over at once.
            table.unanswered(startedAt: startedAt)
            return false
        }
        return true
    }

    /// Reads the key's last entry from the bucket's leader; false when the read had no answer.
    @discardableResult
    private func reread(_ partition: PartitionID) async -> Bool {
        let startedAt = ContinuousClock.now
        do {
            let entry = try await lease(of: partition).read()
            emit(table.read(partition, value: entry.value, revision: entry.revision, startedAt: startedAt, now: .now))
            return true
        } catch {
            table.unanswered(startedAt: startedAt)
            return false
        }
    }

    private func lease(of partition: PartitionID) -> PartitionLease {
        PartitionLease(partition: partition, node: node, bucket: leases, configuration: configuration)
    }

    private func emit(_ events: [LeaseEvent]) {
        for event in events { continuation.yield(event) }
    }

    /// `p<n>` or `a<n>` within the partition count; nil for any other key.
    package static func partition(named key: String, count: Int) -> PartitionID? {
        guard let first = key.first, let index = Int(key.dropFirst()), (0..<count).contains(index),
              String(first) + String(index) == key else { return nil }
        switch first {
        case "p": return PartitionID(space: .boards, index: index)
        case "a": return PartitionID(space: .accounts, index: index)
        default: return nil
        }
    }
}
