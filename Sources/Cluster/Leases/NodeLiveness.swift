// Which nodes are live, from their heartbeats: each node rewrites its own key in the nodes
// bucket every L/3, and a node is live while this node has seen its key change within the last
// L (by this node's clock; clocks are never compared). Sans-I/O: entries and times in, the live
// set out.
//
// A node seen for the first time counts as live from then, though its key may be an old one of a
// dead node: it is dropped one lease time later unless it writes again. That is why a hand-back
// waits a grace of at least L (LeaseConfiguration): a node must prove itself before it is given
// partitions.
public struct NodeLiveness: Sendable {
    private struct Heartbeat: Sendable {
        var revision: UInt64
        var changedAt: ContinuousClock.Instant
        var liveSince: ContinuousClock.Instant
        var isDeleted: Bool
    }

    public let duration: Duration
    private var heartbeats: [String: Heartbeat] = [:]

    public init(duration: Duration) {
        self.duration = duration
    }

    /// `node`'s key read at `revision`; `isDeleted` when the node left (stopped cleanly).
    public mutating func observe(_ node: String, revision: UInt64, isDeleted: Bool, now: ContinuousClock.Instant) {
        if let known = heartbeats[node], known.revision >= revision { return }
        let previous = heartbeats[node].flatMap { !$0.isDeleted && now - $0.changedAt < duration ? $0 : nil }
        heartbeats[node] = Heartbeat(revision: revision, changedAt: now, liveSince: previous?.liveSince ?? now,
                                     isDeleted: isDeleted)
    }

    /// Every node whose heartbeat key was seen, and not deleted.
    public var knownNodes: [String] { heartbeats.filter { !$0.value.isDeleted }.map(\.key).sorted() }

    /// The live nodes, each with since when it has been live without a break.
    public func liveNodes(now: ContinuousClock.Instant) -> [String: ContinuousClock.Instant] {
        var live: [String: ContinuousClock.Instant] = [:]
        for (node, heartbeat) in heartbeats where !heartbeat.isDeleted && now - heartbeat.changedAt < duration {
            live[node] = heartbeat.liveSince
        }
        return live
    }
}
