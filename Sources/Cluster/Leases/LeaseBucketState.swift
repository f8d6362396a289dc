// Whether the leases bucket answers this node: the one thing a node needs to tell "no leader to
// write to" from "someone else holds it". Sans-I/O: the outcomes of the node's own lease requests
// and their times come in, the state goes out; LeasePlanner reads it.
//
// Every lease request (a take, a renewal, a read) goes to the bucket stream's leader: a write
// reads the stream's last sequence and the key there before it publishes, and a read is a
// STREAM.MSG.GET, which only the leader answers. So a definite answer (stored, refused by the
// compare-and-set, or read) proves the bucket had a leader when it was given, and a request
// without one (a timeout, no responders, a lost connection, "cluster not available") is what a
// bucket electing a leader looks like. The watch is not counted: what it delivers was stored,
// but it says nothing about when this node's own requests could be.

/// Whether this node's lease requests are answered.
public enum LeaseBucketState: Sendable, Equatable {
    /// Every request since `since` had a definite answer; `since` is when the first answer came
    /// after a request without one (nil: none ever went unanswered). The lease times a node
    /// counts run from there: whatever passed before it did not pass with a leader answering.
    case answering(since: ContinuousClock.Instant?)
    /// The last request had no definite answer: as far as this node knows, the bucket has no
    /// leader, since `since` (when the first request of this silence began).
    case silent(since: ContinuousClock.Instant)

    /// A request begun at `startedAt` had a definite answer at `now`. An answer to a request
    /// begun before the silence says nothing about the bucket after the silence began.
    public mutating func answered(startedAt: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        guard case .silent(let since) = self, startedAt >= since else { return }
        self = .answering(since: now)
    }

    /// A request begun at `startedAt` had no definite answer. One begun before the bucket answered
    /// again belongs to the silence that answer ended.
    public mutating func unanswered(startedAt: ContinuousClock.Instant) {
        guard case .answering(let since) = self else { return }
        if let since, startedAt < since { return }
        self = .silent(since: startedAt)
    }

    public var isSilent: Bool {
        if case .silent = self { true } else { false }
    }
}
