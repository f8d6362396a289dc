// One node's view of the leases and of its own holdings, kept up to date from the entries it
// reads and the outcomes of its writes. Sans-I/O: entries and times come in, events go out;
// LeaseManager does the reading and writing.
//
// Entries may arrive late and out of order (a watch and a direct read race), so an entry older
// than the one already seen is ignored. An entry newer than the holding's revision either is this
// node's own write whose acknowledgement was lost (same node, same term: adopted) or means the
// lease was taken by someone else (the holding is dropped: `.lost`).
//
// The outcome of every lease request also says whether the bucket answers (`bucket`): a write
// stored or refused, or a read, is an answer; a request without a definite outcome is not. The
// planner lets a live holder's lease time pass only while it does.

/// A change in what this node holds.
public enum LeaseEvent: Sendable, Equatable {
    /// The node holds `partition` from now in `term`; it may serve it once its journal is
    /// replayed.
    case acquired(PartitionID, term: UInt64)
    /// The node no longer holds `partition` and must stop serving it.
    case lost(PartitionID, reason: LossReason)

    public enum LossReason: Sendable, Equatable {
        /// Another write replaced this node's (the compare-and-set failed, or a newer entry was seen).
        case takenOver
        /// No renewal succeeded for a whole lease time with the bucket answering, or the node was
        /// cut off from NATS (its heartbeats not stored either) for one.
        case expired
        /// Handed back to the node the placement gives it.
        case handedBack
    }
}

public struct LeaseTable: Sendable {
    public let node: String
    public let configuration: LeaseConfiguration
    public private(set) var observations: [PartitionID: LeaseObservation] = [:]
    public private(set) var holdings: [PartitionID: LeaseHolding] = [:]
    /// Whether this node's lease requests are answered.
    public private(set) var bucket: LeaseBucketState = .answering(since: nil)

    public init(node: String, configuration: LeaseConfiguration) {
        self.node = node
        self.configuration = configuration
    }

    /// The key's entry as read: `value` nil for a delete (or a key never written, `revision` 0).
    @discardableResult
    public mutating func observe(_ partition: PartitionID, value: [UInt8]?, revision: UInt64,
                                 now: ContinuousClock.Instant) -> [LeaseEvent] {
        if let known = observations[partition], known.revision >= revision { return [] }
        let record = value.map {
            // A value that is not a lease record is held by nobody known, for one lease time.
            LeaseRecord(decoding: $0) ?? LeaseRecord(node: "", term: revision,
                                                     durationMilliseconds: configuration.durationMilliseconds)
        }
        observations[partition] = LeaseObservation(record: record, revision: revision, since: now)
        guard var holding = holdings[partition], revision > holding.revision else { return [] }
        if let record, record.node == node, record.term(atRevision: revision) == holding.term {
            holding.revision = revision
            holdings[partition] = holding
            return []
        }
        holdings[partition] = nil
        return [.lost(partition, reason: .takenOver)]
    }

    /// This node's take (`.take` or `.takeOver`) was stored at `revision`; the write started at
    /// `startedAt`.
    public mutating func took(_ partition: PartitionID, revision: UInt64, startedAt: ContinuousClock.Instant,
                              value: [UInt8], now: ContinuousClock.Instant) -> [LeaseEvent] {
        bucket.answered(startedAt: startedAt, now: now)
        holdings[partition] = LeaseHolding(partition: partition, term: revision, revision: revision, renewedAt: startedAt)
        observe(partition, value: value, revision: revision, now: now)
        return [.acquired(partition, term: revision)]
    }

    /// A renewal begun at `startedAt` was stored at `revision`.
    public mutating func renewed(_ partition: PartitionID, revision: UInt64, startedAt: ContinuousClock.Instant,
                                 value: [UInt8], now: ContinuousClock.Instant) {
        bucket.answered(startedAt: startedAt, now: now)
        guard var holding = holdings[partition] else { return }
        holding.revision = max(holding.revision, revision)
        holding.renewedAt = max(holding.renewedAt, startedAt)
        holdings[partition] = holding
        observe(partition, value: value, revision: revision, now: now)
    }

    /// A read begun at `startedAt` found the key's last entry (`value` nil for a delete, or for a
    /// key never written, `revision` 0).
    @discardableResult
    public mutating func read(_ partition: PartitionID, value: [UInt8]?, revision: UInt64, startedAt: ContinuousClock.Instant,
                              now: ContinuousClock.Instant) -> [LeaseEvent] {
        bucket.answered(startedAt: startedAt, now: now)
        return observe(partition, value: value, revision: revision, now: now)
    }

    /// A request begun at `startedAt` had a definite answer that says nothing else to the table:
    /// a refused compare-and-set (the key is read next, and what it holds decides what was lost),
    /// a delete.
    public mutating func answered(startedAt: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        bucket.answered(startedAt: startedAt, now: now)
    }

    /// A request begun at `startedAt` had no definite outcome: it may have been stored or not,
    /// and the bucket may have no leader.
    public mutating func unanswered(startedAt: ContinuousClock.Instant) {
        bucket.unanswered(startedAt: startedAt)
    }

    /// Stops holding `partition` (before its hand-back delete, or when abandoned).
    public mutating func release(_ partition: PartitionID, reason: LeaseEvent.LossReason) -> [LeaseEvent] {
        guard holdings.removeValue(forKey: partition) != nil else { return [] }
        return [.lost(partition, reason: reason)]
    }

    /// What to do now, given the live nodes (see LeasePlanner).
    public func plan(map: PartitionMap, partitions: [PartitionID], liveNodes: [String: ContinuousClock.Instant],
                     lastHeartbeat: ContinuousClock.Instant? = nil, handingBack: Set<PartitionID> = [],
                     now: ContinuousClock.Instant) -> [LeaseAction] {
        LeasePlanner.plan(node: node, map: map, partitions: partitions, leases: observations, holdings: holdings,
                          liveNodes: liveNodes, lastHeartbeat: lastHeartbeat, bucket: bucket, handingBack: handingBack,
                          now: now, configuration: configuration)
    }
}
