// Which lease writes a node should make now: a pure function of what it has seen of the leases,
// what it holds, which nodes are live, and the time.
//
// Theory of operation. Each partition should be held by the live node the placement gives it
// (PartitionMap.placement: rendezvous weights, spread evenly over the live nodes). A node
// - renews what it holds every L/3, and stops serving a partition (abandons it) once it has not
//   managed a renewal for a whole L, unless its own heartbeats keep it live in the others' eyes:
//   then for as long as they do, up to `liveHolderMultiple` lease times. Others take over a
//   lease unrenewed for L only when its holder is not live, and wait that longer time when it is,
//   so the holder stops serving before anyone may take over either way. This is what lets an
//   owner keep its partitions through a leader election of the leases bucket alone;
// - hands a held partition back (deletes its lease) when the placement gives it to another live
//   node that has been live for the grace period, a few per round, so partitions move back to a node
//   that returns;
// - takes a partition whose lease is absent, or expired (its revision unchanged for the
//   record's L on this node's clock), when the placement gives it this node. The others rank
//   after that node by their rendezvous weights, and the node ranked k-th takes it only once it has been free for k more lease times, so a partition whose
//   preferred node never acts is still served, and nodes that disagree for a moment about who
//   is live do not all race for it.
// None of this is needed for safety: two nodes that both think they should take a partition
// both try, and the bucket's compare-and-set lets one win. And a node that holds a lease it has
// lost cannot write its journal (PartitionJournal's fence). Timing only decides who tries.

/// What a node has seen of one lease key.
public struct LeaseObservation: Sendable, Equatable {
    /// Nil when the key is absent or deleted.
    public var record: LeaseRecord?
    /// The revision of the key's last entry (a delete included); 0 when it was never written.
    public var revision: UInt64
    /// When this node first saw that revision, by its own clock.
    public var since: ContinuousClock.Instant

    public init(record: LeaseRecord?, revision: UInt64, since: ContinuousClock.Instant) {
        self.record = record
        self.revision = revision
        self.since = since
    }
}

/// A lease this node holds.
public struct LeaseHolding: Sendable, Equatable {
    public var partition: PartitionID
    /// The revision of the write that took it.
    public var term: UInt64
    /// The revision of this node's last write of it: what the next renewal compares against.
    public var revision: UInt64
    /// When that write was started. Others time the lease from when they see the write, which is
    /// later, so the holder's own count is the conservative one.
    public var renewedAt: ContinuousClock.Instant

    public init(partition: PartitionID, term: UInt64, revision: UInt64, renewedAt: ContinuousClock.Instant) {
        self.partition = partition
        self.term = term
        self.revision = revision
        self.renewedAt = renewedAt
    }
}

/// A lease write (or local decision) the planner asks for.
public enum LeaseAction: Sendable, Equatable {
    /// Create the absent (or deleted) key.
    case take(PartitionID)
    /// Write over an expired lease, or one naming this node that it does not hold (it
    /// restarted), from the revision seen.
    case takeOver(PartitionID, revision: UInt64)
    case renew(PartitionID, revision: UInt64)
    /// Stop serving, then delete the key at the holding's revision.
    case handBack(PartitionID, revision: UInt64)
    /// Stop serving without writing: no renewal succeeded for a whole lease time.
    case abandon(PartitionID)
}

public enum LeasePlanner {
    /// The actions for `node` now, in partition order.
    /// - Parameters:
    ///   - partitions: the partitions this node takes part in.
    ///   - leases: what the node has seen of each lease key; a partition missing here is not
    ///     known yet and is neither taken nor handed back.
    ///   - liveNodes: every node seen live, with since when it has been live; `node` itself
    ///     counts as live whether or not it is listed.
    ///   - lastHeartbeat: when this node began its last heartbeat write that was stored; nil if
    ///     none was.
    public static func plan(node: String, map: PartitionMap, partitions: [PartitionID],
                            leases: [PartitionID: LeaseObservation], holdings: [PartitionID: LeaseHolding],
                            liveNodes: [String: ContinuousClock.Instant], lastHeartbeat: ContinuousClock.Instant? = nil,
                            now: ContinuousClock.Instant, configuration: LeaseConfiguration) -> [LeaseAction] {
        var candidates = Set(liveNodes.keys)
        candidates.insert(node)
        let placement = map.placement(of: partitions, among: candidates)
        var actions: [LeaseAction] = []
        var handBacks = 0
        for partition in partitions.sorted() {
            let ranking = Self.ranking(of: partition, placedOn: placement[partition], among: candidates, map: map)
            if let holding = holdings[partition] {
                if now >= servingDeadline(of: holding, lastHeartbeat: lastHeartbeat, configuration: configuration) {
                    actions.append(.abandon(partition))
                } else if let preferred = ranking.first, preferred != node, handBacks < configuration.handBacksPerRound,
                          let liveSince = liveNodes[preferred], now - liveSince >= configuration.handBackGrace {
                    handBacks += 1
                    actions.append(.handBack(partition, revision: holding.revision))
                } else if now - holding.renewedAt >= configuration.renewInterval {
                    actions.append(.renew(partition, revision: holding.revision))
                }
                continue
            }
            guard let lease = leases[partition], let rank = ranking.firstIndex(of: node) else { continue }
            let freeSince: ContinuousClock.Instant
            if let record = lease.record, record.node != node {
                let multiple = liveNodes[record.node] == nil ? 1 : Int64(configuration.liveHolderMultiple)
                freeSince = lease.since + .milliseconds(record.durationMilliseconds * multiple)
            } else {
                // Absent, or naming this node, which does not hold it: nobody is serving it.
                freeSince = lease.since
            }
            guard now >= freeSince + configuration.duration * rank else { continue }
            actions.append(lease.record == nil ? .take(partition) : .takeOver(partition, revision: lease.revision))
        }
        return actions
    }

    /// The order in which `nodes` may take `partition` while it is free: the node it is placed on,
    /// then the others by their rendezvous weights.
    public static func ranking(of partition: PartitionID, placedOn placed: String?, among nodes: Set<String>,
                               map: PartitionMap) -> [String] {
        let byWeight = map.ranking(of: partition, among: nodes)
        guard let placed, nodes.contains(placed) else { return byWeight }
        return [placed] + byWeight.filter { $0 != placed }
    }

    /// Until when a holder may serve what it holds: L after its last renewal began, or, while its
    /// heartbeats keep it live (others see a heartbeat no earlier than its write began, and count
    /// it live for L from then), L after its last stored heartbeat began, never past
    /// `liveHolderMultiple` lease times after the renewal.
    public static func servingDeadline(of holding: LeaseHolding, lastHeartbeat: ContinuousClock.Instant?,
                                       configuration: LeaseConfiguration) -> ContinuousClock.Instant {
        let renewed = holding.renewedAt + configuration.duration
        guard let lastHeartbeat else { return renewed }
        let live = min(lastHeartbeat + configuration.duration,
                       holding.renewedAt + configuration.duration * configuration.liveHolderMultiple)
        return max(renewed, live)
    }
}
