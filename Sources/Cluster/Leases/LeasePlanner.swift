// Which lease writes a node should make now: a pure function of what it has seen of the leases,
// what it holds, which nodes are live, whether the leases bucket answers it, and the time.
//
// Theory of operation. Each partition should be held by the live node the placement gives it
// (PartitionMap.placement: rendezvous weights, spread evenly over the live nodes). A node
// - renews what it holds every L/3;
// - hands a held partition back (deletes its lease) when the placement gives it to another live
//   node that has been live for the grace period, a few per round, so partitions move back to a node
//   that returns;
// - takes a partition whose lease is absent, or expired, when the placement gives it this node.
//   The others rank after that node by their rendezvous weights, and the node ranked k-th takes it
//   only once it has been free for k more lease times, so a partition whose preferred node never
//   acts is still served, and nodes that disagree for a moment about who is live do not all race
//   for it.
//
// When a holder stops serving, and when a lease counts as expired, is the rest of it. A renewal
// has one of three outcomes, and they mean different things:
// - stored: the holder serves on, L from when the write began;
// - refused (the compare-and-set lost), or a newer entry by another node seen: the lease is
//   someone else's. This is the only loss that takes no time at all (LeaseTable: `.takenOver`);
// - no definite answer (a timeout, no responders, a lost connection): the bucket has no leader to
//   write to, as far as this node can tell (LeaseBucketState: `.silent`). The leases bucket is a
//   stream with a leader of its own; when the NATS server leading it dies, nothing is written to
//   it until a new leader is elected (4 to 9 s and more in nats-server 2.9's raft), by anybody.
// So the holder counts only the time that passes with the bucket answering it. While its
// renewals go unanswered and its own heartbeats still land (in the nodes bucket, kept led by
// another NATS server, so a landed heartbeat proves the node reaches a quorum of NATS), it keeps
// serving. It stops (abandons) once L has passed since its last renewal began and, besides,
// either L has passed with the bucket answering (since it answered again after a silence) or L
// has passed since its last stored heartbeat began (cut off from NATS entirely: its heartbeats
// stop too) (`servingDeadline`). Others, symmetrically, time a lease by how long they have seen its
// revision unchanged on their own clock, and take it over
// - when its holder is not live (no heartbeat seen for L): L after they first saw the revision.
//   The holder stopped serving by then: it has not stored a heartbeat for L either (others see a
//   heartbeat no earlier than its write began), nor a renewal;
// - when its holder is live: only while the bucket answers them, `liveHolderMultiple` lease
//   times after they first saw the revision or after the bucket answered them again, whichever
//   is later. Their clock stops while their own requests go unanswered and starts again, from
//   zero, once one is answered: an election of the leases bucket costs a live holder nothing, and
//   once a leader exists it has that long to renew, which it does within a tick, before any
//   compare-and-set of a taker could be due. A node that does not write to the bucket learns
//   whether it answers by reading the key (`.probe`) once a live holder's lease is overdue (its
//   revision unchanged for half a lease, when renewals come every third).
//
// What bounds a stale holder's serving, then. Cut off from NATS: L after its last heartbeat or
// renewal, whichever is later, by its own clock, before anyone may take over. Able to reach the
// nodes bucket but not the leases bucket while others can (only a NATS partition that is not
// transitive does that: a leader others reach, that the holder's server cannot): until it hears
// of the new holder (its watch, a refused renewal) or its next journal append is refused by the
// fence the new holder's first append leaves, whichever comes first; others take the lease after
// `liveHolderMultiple` lease times of answers. None of this is needed for safety: two nodes that
// both think they should take a partition both try, and the bucket's compare-and-set lets one
// win; a node that holds a lease it has lost cannot write its journal (PartitionJournal's fence),
// so nothing it acknowledges is lost. Timing only decides who tries, and how long clients wait.

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

/// A lease request (or local decision) the planner asks for.
public enum LeaseAction: Sendable, Equatable {
    /// Create the absent (or deleted) key.
    case take(PartitionID)
    /// Write over an expired lease, or one naming this node that it does not hold (it
    /// restarted), from the revision seen.
    case takeOver(PartitionID, revision: UInt64)
    case renew(PartitionID, revision: UInt64)
    /// Stop serving, then delete the key at the holding's revision.
    case handBack(PartitionID, revision: UInt64)
    /// Stop serving without writing: no renewal succeeded for a whole lease time with the bucket
    /// answering, or the node was cut off from NATS for one.
    case abandon(PartitionID)
    /// Read the key from the bucket's leader: a live holder's lease is overdue, and whether the
    /// bucket answers decides whether the time it stays so counts (its entry is seen too).
    case probe(PartitionID)
}

public enum LeasePlanner {
    /// The actions for `node` now, in partition order, then at most one `.probe`.
    /// - Parameters:
    ///   - partitions: the partitions this node takes part in.
    ///   - leases: what the node has seen of each lease key; a partition missing here is not
    ///     known yet and is neither taken nor handed back.
    ///   - liveNodes: every node seen live, with since when it has been live; `node` itself
    ///     counts as live whether or not it is listed.
    ///   - lastHeartbeat: when this node began its last heartbeat write that was stored; nil if
    ///     none was.
    ///   - bucket: whether the leases bucket answers this node's requests.
    ///   - handingBack: the held partitions whose hand-back is under way (their holder stopping
    ///     to serve them): renewed until their key is deleted, and counted against the hand-backs
    ///     of the round, so one stop at a time goes on.
    public static func plan(node: String, map: PartitionMap, partitions: [PartitionID],
                            leases: [PartitionID: LeaseObservation], holdings: [PartitionID: LeaseHolding],
                            liveNodes: [String: ContinuousClock.Instant], lastHeartbeat: ContinuousClock.Instant? = nil,
                            bucket: LeaseBucketState = .answering(since: nil), handingBack: Set<PartitionID> = [],
                            now: ContinuousClock.Instant, configuration: LeaseConfiguration) -> [LeaseAction] {
        var candidates = Set(liveNodes.keys)
        candidates.insert(node)
        let placement = map.placement(of: partitions, among: candidates)
        var actions: [LeaseAction] = []
        var handBacks = handingBack.intersection(holdings.keys).count
        var requests = 0
        var overdue: PartitionID?
        for partition in partitions.sorted() {
            let ranking = Self.ranking(of: partition, placedOn: placement[partition], among: candidates, map: map)
            if let holding = holdings[partition] {
                if now >= servingDeadline(of: holding, lastHeartbeat: lastHeartbeat, bucket: bucket, configuration: configuration) {
                    actions.append(.abandon(partition))
                } else if !handingBack.contains(partition), let preferred = ranking.first, preferred != node,
                          handBacks < configuration.handBacksPerRound,
                          let liveSince = liveNodes[preferred], now - liveSince >= configuration.handBackGrace {
                    handBacks += 1
                    actions.append(.handBack(partition, revision: holding.revision))
                } else if now - holding.renewedAt >= configuration.renewInterval {
                    requests += 1
                    actions.append(.renew(partition, revision: holding.revision))
                }
                continue
            }
            guard let lease = leases[partition], let rank = ranking.firstIndex(of: node) else { continue }
            let freeSince: ContinuousClock.Instant
            if let record = lease.record, record.node != node {
                let duration = Duration.milliseconds(record.durationMilliseconds)
                if liveNodes[record.node] == nil {
                    freeSince = lease.since + duration
                } else {
                    if overdue == nil, now - lease.since >= duration / 2 { overdue = partition }
                    // The clock of a live holder's lease runs only while the bucket answers.
                    guard case .answering(let answeringSince) = bucket else { continue }
                    freeSince = max(lease.since, answeringSince ?? lease.since) + duration * configuration.liveHolderMultiple
                }
            } else {
                // Absent, or naming this node, which does not hold it: nobody is serving it.
                freeSince = lease.since
            }
            guard now >= freeSince + configuration.duration * rank else { continue }
            requests += 1
            actions.append(lease.record == nil ? .take(partition) : .takeOver(partition, revision: lease.revision))
        }
        // Another request this round tells as well whether the bucket answers.
        if requests == 0, let overdue { actions.append(.probe(overdue)) }
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

    /// Until when a holder may serve what it holds, as of what it knows now: L after its last
    /// renewal began; past that, while its heartbeats keep it live (others see a heartbeat no
    /// earlier than its write began, and count it live for L from then), for as long as the
    /// bucket does not answer it, and for L after it answered again.
    public static func servingDeadline(of holding: LeaseHolding, lastHeartbeat: ContinuousClock.Instant?,
                                       bucket: LeaseBucketState = .answering(since: nil),
                                       configuration: LeaseConfiguration) -> ContinuousClock.Instant {
        let renewed = holding.renewedAt + configuration.duration
        guard let lastHeartbeat else { return renewed }
        let live = lastHeartbeat + configuration.duration
        switch bucket {
        case .silent:
            return max(renewed, live)
        case .answering(let since):
            let answered = max(holding.renewedAt, since ?? holding.renewedAt) + configuration.duration
            return max(renewed, min(live, answered))
        }
    }
}
