// Process-wide counters and histograms, rendered in the Prometheus text exposition format at
// `GET /metrics`. The counter types and the per-connection counts are WebSocketServer's
// (lock-free atomics, bumped on every message on every loop); histograms take a short lock, and
// are used off the per-byte paths (per request, per fsync, per snapshot).
import Synchronization
import WebSocketServer

/// A histogram with fixed upper bounds (seconds), as Prometheus expects.
package final class Histogram: Sendable {
    let bounds: [Double]
    private let state: Mutex<(buckets: [Int], count: Int, sum: Double)>

    init(bounds: [Double]) {
        self.bounds = bounds
        self.state = Mutex((Array(repeating: 0, count: bounds.count), 0, 0))
    }

    package func observe(_ value: Double) {
        state.withLock { state in
            if let index = bounds.firstIndex(where: { value <= $0 }) { state.buckets[index] += 1 }
            state.count += 1
            state.sum += value
        }
    }

    package var snapshot: (buckets: [Int], count: Int, sum: Double) { state.withLock { $0 } }
}

package final class LabeledHistogram: Sendable {
    let bounds: [Double]
    private let histograms = Mutex<[String: Histogram]>([:])
    init(bounds: [Double]) { self.bounds = bounds }

    package func observe(_ value: Double, label: String) {
        let histogram = histograms.withLock { table in
            if let existing = table[label] { return existing }
            let created = Histogram(bounds: bounds)
            table[label] = created
            return created
        }
        histogram.observe(value)
    }

    var current: [String: Histogram] { histograms.withLock { $0 } }
}

/// Every metric the server exports. One instance per server, shared by all queues.
package final class ServerMetrics: Sendable {
    package init() {}

    static let latencyBounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    /// What the transport counts per connection (`ClientConnection`).
    package let connections = ConnectionMetrics()
    package let requests = LabeledCounter()
    /// Refusals by limit: `connection` and `user` request rates (a `rate_limited` reply),
    /// `flood` (a connection closed 1008 for flooding on after refusals). Handshake-rate refusals
    /// are handshake failures (`handshake_rate`), counted there.
    let rateLimited = LabeledCounter()
    /// Connections logged in with the admin secret.
    let adminSecretLogins = LabeledCounter()
    package let requestLatency = LabeledHistogram(bounds: latencyBounds)
    let accepts = Counter()
    let racesLost = Counter()
    package let pushesSent = Counter()
    let pushesDropped = Counter()
    let journalFsyncLatency = Histogram(bounds: latencyBounds)
    let journalBatchRecords = Histogram(bounds: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096])
    let snapshotDuration = Histogram(bounds: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60])
    let snapshotBytes = Gauge()
    /// Order revisions written to the archive, failed archive batches, orders waiting for one,
    /// and orders moved out of memory (Archiver.swift).
    let archivedOrders = Counter()
    let archiveFailures = Counter()
    let archivePending = Gauge()
    let ordersMovedToArchive = Counter()
    let openOrders = Mutex<[String: Int]>([:])
    package let relay = RelayMetrics()
    let inbox = InboxMetrics()
}

/// The inbox between a node's partitions (PartitionedStorage.swift). Rendered once the node
/// runs one (`isActive`): a single node's `/metrics`, and a cluster with one journal, never show it.
package final class InboxMetrics: Sendable {
    /// Messages the follower applied as a local source handed them over, and as it read them.
    package let messagesHandedOver = Counter()
    package let messagesRead = Counter()
    /// Publishes to an inbox that failed (each is sent again after a pause).
    package let publishFailures = Counter()
    /// How far the follower has read the inbox (its stream sequence).
    package let appliedPosition = Gauge()
    /// Each sender's count of entries not yet delivered, summed when rendered.
    private let senders = Mutex<[@Sendable () -> Int]>([])
    private let active = Atomic<Bool>(false)

    package func track(undelivered: @escaping @Sendable () -> Int) {
        active.store(true, ordering: .relaxed)
        senders.withLock { $0.append(undelivered) }
    }

    var isActive: Bool { active.load(ordering: .relaxed) }
    var undeliveredEntries: Int { senders.withLock { $0 }.reduce(0) { $0 + $1() } }

    package init() {}
}

/// Cluster mode's relay (Cluster/Relay*.swift), bumped on every relayed envelope, so atomics
/// only. Rendered once `markClustered()` was called: a single node's `/metrics` never shows it.
package final class RelayMetrics: Sendable {
    private let clustered = Atomic<Bool>(false)
    /// Relayed clients this node serves as the partition's owner (`RelayHost`).
    package let hostedSessions = Gauge()
    /// Clients this node holds and relays to another owner (`RelayGateway`).
    package let relayedConnections = Gauge()
    /// NATS envelopes received from and published to other nodes.
    package let envelopesIn = Counter()
    package let envelopesOut = Counter()
    /// Envelopes dropped unread: malformed, or from an owner none of our connections is relayed to.
    package let envelopesRefused = Counter()
    /// Envelopes that could not be published (NATS output full, connection down): frames lost.
    package let publishFailures = Counter()
    /// 1 while this node owns the partition.
    package let isOwner = Gauge()
    /// Requests other nodes routed to a partition this node owns, by partition (OwnerRequests).
    package let routedRequests = LabeledCounter()
    /// Personal events this node, as an account partition's owner, published on the user
    /// subjects (PersonalEventPublisher), and those the connection would not take.
    package let userEventsPublished = Counter()
    package let userEventPublishFailures = Counter()
    /// Devices here following a personal stream numbered by another node (FollowedStreams), the
    /// questions asked of its owner, and the devices closed because events were lost for them.
    package let followedStreams = Gauge()
    package let streamQuestions = Counter()
    package let streamLosses = Counter()
    /// Board changes this node, as a board partition's owner, published on the feed subjects
    /// (FeedEventPublisher), and those the connection would not take.
    package let feedEventsPublished = Counter()
    package let feedEventPublishFailures = Counter()
    /// Boards whose changes from other nodes' partitions a node forwards to its watchers
    /// (FollowedBoards), and the times a partition's numbers skipped so that board's watchers here
    /// had to subscribe again.
    package let followedBoards = Gauge()
    package let feedGaps = Counter()
    /// Connections whose session runs on this node (`--cluster-sessions node`, NodeSession).
    package let nodeSessions = Gauge()

    package func markClustered() { clustered.store(true, ordering: .relaxed) }
    var isClustered: Bool { clustered.load(ordering: .relaxed) }

    package init() {}
}
