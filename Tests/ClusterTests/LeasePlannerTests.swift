// The lease decisions without NATS: what a node takes, renews, hands back and abandons, from
// what it has seen and the time, and how its table follows entries and write outcomes.
import Testing
import TestSupport
@testable import Cluster

@Suite struct LeasePlannerTests {
    let map = PartitionMap(partitionCount: 8)
    let configuration = LeaseConfiguration(duration: .seconds(6))
    let start = ContinuousClock.now
    var partitions: [PartitionID] { (0..<8).map { PartitionID(space: .boards, index: $0) } }

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int64(seconds * 1_000)) }

    func record(_ node: String, term: UInt64 = 0) -> LeaseRecord {
        LeaseRecord(node: node, term: term, durationMilliseconds: 6_000)
    }

    /// A partition placed on `node` among `nodes`, and one that is not.
    func partitions(preferring node: String, among nodes: [String]) -> (first: PartitionID, other: PartitionID) {
        let placement = map.placement(of: partitions, among: nodes)
        let first = partitions.first { placement[$0] == node }!
        let other = partitions.first { placement[$0] != node }!
        return (first, other)
    }

    func plan(_ node: String, leases: [PartitionID: LeaseObservation], holdings: [PartitionID: LeaseHolding] = [:],
              live: [String: ContinuousClock.Instant], now: Double) -> [LeaseAction] {
        LeasePlanner.plan(node: node, map: map, partitions: partitions, leases: leases, holdings: holdings,
                          liveNodes: live, now: at(now), configuration: configuration)
    }

    @Test func aFreePartitionIsTakenAtOnceOnlyByTheNodeRankedFirst() {
        let nodes = ["a", "b", "c"]
        let live = Dictionary(uniqueKeysWithValues: nodes.map { ($0, at(0)) })
        let (mine, theirs) = partitions(preferring: "a", among: nodes)
        let absent = [mine: LeaseObservation(record: nil, revision: 0, since: at(0)),
                      theirs: LeaseObservation(record: nil, revision: 0, since: at(0))]
        #expect(plan("a", leases: absent, live: live, now: 0) == [.take(mine)])
        // The second-ranked node steps in only once the partition has stayed free for one more L.
        let ranking = LeasePlanner.ranking(of: theirs, placedOn: map.placement(of: partitions, among: nodes)[theirs],
                                           among: Set(nodes), map: map)
        let rankOfA = ranking.firstIndex(of: "a")!
        #expect(rankOfA > 0 && Array(ranking.dropFirst()) == map.ranking(of: theirs, among: nodes).filter { $0 != ranking[0] },
                "after the node it is placed on, by rendezvous weight")
        #expect(!plan("a", leases: absent, live: live, now: 6.0 * Double(rankOfA) - 0.1).contains(.take(theirs)))
        #expect(plan("a", leases: absent, live: live, now: 6.0 * Double(rankOfA)).contains(.take(theirs)))
        // A partition never read is not known to be free.
        #expect(plan("a", leases: [:], live: live, now: 100).isEmpty)
    }

    /// Free partitions are taken so that every node holds an even share, not as the weights
    /// alone would give them (which put 4, none and 4 of these 8 on these three nodes).
    @Test func everyNodeTakesAnEvenShareOfTheFreePartitions() {
        let nodes = ["bb1", "bb2", "bb3"]
        let live = Dictionary(uniqueKeysWithValues: nodes.map { ($0, at(0)) })
        let absent = Dictionary(uniqueKeysWithValues: partitions.map { ($0, LeaseObservation(record: nil, revision: 0, since: at(0))) })
        var taken: [String: [PartitionID]] = [:]
        for node in nodes {
            taken[node] = plan(node, leases: absent, live: live, now: 0).compactMap { if case .take(let partition) = $0 { partition } else { nil } }
        }
        #expect(taken.values.flatMap { $0 }.sorted() == partitions, "each partition taken once")
        #expect(taken.values.map(\.count).sorted() == [2, 3, 3])
    }

    @Test func anExpiredLeaseIsTakenOverFromTheRevisionSeen() {
        let nodes = ["a", "b"]
        let (mine, _) = partitions(preferring: "a", among: nodes)
        let held = [mine: LeaseObservation(record: record("b", term: 4), revision: 9, since: at(1))]
        // b's heartbeat has stopped too: its lease lasts one lease time.
        #expect(plan("a", leases: held, live: [:], now: 6.9).isEmpty, "taken before the lease expired")
        #expect(plan("a", leases: held, live: [:], now: 7) == [.takeOver(mine, revision: 9)])
        // A lease naming this node that it does not hold (it restarted) is taken over at once.
        let stale = [mine: LeaseObservation(record: record("a", term: 2), revision: 3, since: at(1))]
        #expect(plan("a", leases: stale, live: ["b": at(0)], now: 1) == [.takeOver(mine, revision: 3)])
    }

    @Test func aLiveHoldersUnrenewedLeaseLastsThreeLeaseTimes() {
        let (mine, _) = partitions(preferring: "a", among: ["a", "b"])
        let held = [mine: LeaseObservation(record: record("b", term: 4), revision: 9, since: at(1))]
        // b's heartbeats still arrive: it keeps its lease, which a reads to see whether the
        // bucket answers (it does here: the lease's time runs).
        #expect(plan("a", leases: held, live: ["b": at(0)], now: 7) == [.probe(mine)])
        #expect(plan("a", leases: held, live: ["b": at(0)], now: 18.9) == [.probe(mine)])
        #expect(plan("a", leases: held, live: ["b": at(0)], now: 19) == [.takeOver(mine, revision: 9)])
        // Once its heartbeats stop too, the lease has already run out.
        #expect(plan("a", leases: held, live: [:], now: 12) == [.takeOver(mine, revision: 9)])
        // With a multiple of 1 a lease lasts one lease time whatever the heartbeats say.
        let strict = LeaseConfiguration(duration: .seconds(6), liveHolderMultiple: 1)
        #expect(LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: held, holdings: [:],
                                  liveNodes: ["b": at(0)], now: at(7), configuration: strict)
                == [.takeOver(mine, revision: 9)])
    }

    @Test func aHolderRenewsEveryThirdOfALeaseAndAbandonsAfterAWholeOneWithoutRenewal() {
        let mine = partitions[0]
        let holding = [mine: LeaseHolding(partition: mine, term: 5, revision: 8, renewedAt: at(0))]
        let seen = [mine: LeaseObservation(record: record("a", term: 5), revision: 8, since: at(0))]
        #expect(plan("a", leases: seen, holdings: holding, live: [:], now: 1.9).isEmpty)
        #expect(plan("a", leases: seen, holdings: holding, live: [:], now: 2) == [.renew(mine, revision: 8)])
        #expect(plan("a", leases: seen, holdings: holding, live: [:], now: 5.9) == [.renew(mine, revision: 8)])
        #expect(plan("a", leases: seen, holdings: holding, live: [:], now: 6) == [.abandon(mine)])
    }

    /// While the bucket answers, a holder that has not renewed for L stops, whatever its
    /// heartbeats say: a renewal the bucket answers is stored or refused, so L without one means
    /// the node could not even try.
    @Test func aHolderStopsAfterALeaseWithoutRenewalWhileTheBucketAnswers() {
        let mine = partitions[0]
        let holding = [mine: LeaseHolding(partition: mine, term: 5, revision: 8, renewedAt: at(0))]
        let seen = [mine: LeaseObservation(record: record("a", term: 5), revision: 8, since: at(0))]
        func plan(heartbeat: Double, bucket: LeaseBucketState, now: Double) -> [LeaseAction] {
            LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: seen, holdings: holding,
                              liveNodes: [:], lastHeartbeat: at(heartbeat), bucket: bucket, now: at(now),
                              configuration: configuration)
        }
        #expect(plan(heartbeat: 5, bucket: .answering(since: nil), now: 5.9) == [.renew(mine, revision: 8)])
        #expect(plan(heartbeat: 5, bucket: .answering(since: nil), now: 6) == [.abandon(mine)])
        // Answering since before the renewal: the same.
        #expect(plan(heartbeat: 5, bucket: .answering(since: at(-3)), now: 6) == [.abandon(mine)])
    }

    /// While its renewals go unanswered and its heartbeats land, a holder serves on for as long
    /// as that lasts, past any number of lease times; it stops L after its last stored heartbeat
    /// began (it is cut off), or L after the bucket answered it again.
    @Test func aHolderServesOnItsHeartbeatsWhileTheBucketIsSilentAndForALeaseOnceItAnswers() {
        let mine = partitions[0]
        let holding = [mine: LeaseHolding(partition: mine, term: 5, revision: 8, renewedAt: at(0))]
        let seen = [mine: LeaseObservation(record: record("a", term: 5), revision: 8, since: at(0))]
        func plan(heartbeat: Double?, bucket: LeaseBucketState, now: Double) -> [LeaseAction] {
            LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: seen, holdings: holding,
                              liveNodes: [:], lastHeartbeat: heartbeat.map(at), bucket: bucket, now: at(now),
                              configuration: configuration)
        }
        let silent = LeaseBucketState.silent(since: at(1))
        // Heartbeats landing: still serving (renewing) ten lease times on.
        #expect(plan(heartbeat: 59, bucket: silent, now: 60) == [.renew(mine, revision: 8)])
        // The last stored heartbeat began at 5 s: others count it live for L from then at least.
        #expect(plan(heartbeat: 5, bucket: silent, now: 10.9) == [.renew(mine, revision: 8)])
        #expect(plan(heartbeat: 5, bucket: silent, now: 11) == [.abandon(mine)])
        // A heartbeat older than the renewal extends nothing; no heartbeat at all, neither.
        #expect(plan(heartbeat: -1, bucket: silent, now: 6) == [.abandon(mine)])
        #expect(plan(heartbeat: nil, bucket: silent, now: 6) == [.abandon(mine)])
        // The bucket answered again at 20 s (a read, say) and no renewal landed: L from then.
        let answering = LeaseBucketState.answering(since: at(20))
        #expect(plan(heartbeat: 25, bucket: answering, now: 25.9) == [.renew(mine, revision: 8)])
        #expect(plan(heartbeat: 25, bucket: answering, now: 26) == [.abandon(mine)])
        // ...and never past its last stored heartbeat's L.
        #expect(plan(heartbeat: 18, bucket: answering, now: 24) == [.abandon(mine)])
        #expect(LeasePlanner.servingDeadline(of: holding[mine]!, lastHeartbeat: at(22), bucket: answering,
                                             configuration: configuration) == at(26))
        #expect(LeasePlanner.servingDeadline(of: holding[mine]!, lastHeartbeat: at(22), bucket: silent,
                                             configuration: configuration) == at(28))
    }

    /// A live holder's lease does not age while the bucket does not answer the node timing it,
    /// and ages from zero once it answers again: a taker's compare-and-set cannot beat the
    /// holder's first renewal after an election.
    @Test func aLiveHoldersLeaseAgesOnlyWhileTheBucketAnswers() {
        let (mine, _) = partitions(preferring: "a", among: ["a", "b"])
        let held = [mine: LeaseObservation(record: record("b", term: 4), revision: 9, since: at(1))]
        func plan(_ bucket: LeaseBucketState, live: Bool = true, now: Double) -> [LeaseAction] {
            LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: held, holdings: [:],
                              liveNodes: live ? ["b": at(0)] : [:], bucket: bucket, now: at(now), configuration: configuration)
        }
        // Silent: never taken, however long; the key is read to learn when the bucket answers.
        #expect(plan(.silent(since: at(2)), now: 19) == [.probe(mine)])
        #expect(plan(.silent(since: at(2)), now: 600) == [.probe(mine)])
        // Answering again since 30 s: three lease times from then, not from when the revision was seen.
        #expect(plan(.answering(since: at(30)), now: 47.9) == [.probe(mine)])
        #expect(plan(.answering(since: at(30)), now: 48) == [.takeOver(mine, revision: 9)])
        // Answering since before the revision was seen: from the revision, as before.
        #expect(plan(.answering(since: at(0)), now: 18.9) == [.probe(mine)])
        #expect(plan(.answering(since: at(0)), now: 19) == [.takeOver(mine, revision: 9)])
        // A holder that is not live has stopped serving L after its last renewal whatever the
        // bucket did meanwhile: taken over then, silent or not (the write lands once it can).
        #expect(plan(.silent(since: at(2)), live: false, now: 6.9).isEmpty)
        #expect(plan(.silent(since: at(2)), live: false, now: 7) == [.takeOver(mine, revision: 9)])
        #expect(plan(.answering(since: at(30)), live: false, now: 7) == [.takeOver(mine, revision: 9)])
    }

    /// A node reads a key only while a live holder's lease is overdue (unchanged for half a
    /// lease: renewals come every third), once a round, and not when it makes another request.
    @Test func aProbeIsPlannedOnlyForAnOverdueLiveHoldersLeaseAndOnlyInARoundWithoutRequests() {
        let nodes = ["a", "b"]
        let placement = map.placement(of: partitions, among: nodes)
        let ofB = partitions.filter { placement[$0] == "b" }
        let ofA = partitions.filter { placement[$0] == "a" }
        #expect(ofB.count >= 2 && !ofA.isEmpty, "the test needs two partitions placed on b and one on a")
        var leases: [PartitionID: LeaseObservation] = [:]
        leases[ofB[0]] = LeaseObservation(record: record("b", term: 4), revision: 9, since: at(1))
        leases[ofB[1]] = LeaseObservation(record: record("b", term: 5), revision: 10, since: at(1))
        let live = ["b": at(0)]
        func plan(holdings: [PartitionID: LeaseHolding] = [:], _ leases: [PartitionID: LeaseObservation], now: Double) -> [LeaseAction] {
            LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: leases, holdings: holdings,
                              liveNodes: live, bucket: .answering(since: nil), now: at(now), configuration: configuration)
        }
        #expect(plan(leases, now: 3.9).isEmpty, "probed before the lease was overdue")
        #expect(plan(leases, now: 4) == [.probe(min(ofB[0], ofB[1]))], "one probe, for the first overdue lease")
        // A renewal due this round asks the bucket as well.
        let holding = [ofA[0]: LeaseHolding(partition: ofA[0], term: 2, revision: 3, renewedAt: at(1))]
        var withMine = leases
        withMine[ofA[0]] = LeaseObservation(record: record("a", term: 2), revision: 3, since: at(1))
        #expect(plan(holdings: holding, withMine, now: 4) == [.renew(ofA[0], revision: 3)])
        #expect(plan(holdings: holding, withMine, now: 4).contains(.probe(ofB[0])) == false)
        // A lease of a holder that is not live is not probed: its time runs anyway.
        let noneLive = LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: leases, holdings: [:],
                                         liveNodes: [:], now: at(4), configuration: configuration)
        #expect(noneLive.isEmpty)
    }

    @Test func theBucketIsSilentFromItsFirstUnansweredRequestUntilAnAnswerToOneBegunSince() {
        var bucket = LeaseBucketState.answering(since: nil)
        bucket.answered(startedAt: at(0), now: at(0.1))
        #expect(bucket == .answering(since: nil), "answers while answering change nothing")
        bucket.unanswered(startedAt: at(1))
        bucket.unanswered(startedAt: at(2))
        #expect(bucket == .silent(since: at(1)), "the silence began with its first unanswered request")
        #expect(bucket.isSilent)
        // The answer to a request begun before the silence says nothing about after it began.
        bucket.answered(startedAt: at(0.5), now: at(3))
        #expect(bucket == .silent(since: at(1)))
        bucket.answered(startedAt: at(4), now: at(4.2))
        #expect(bucket == .answering(since: at(4.2)), "answering again from the answer")
        // A request of the silence whose failure is told late does not start another.
        bucket.unanswered(startedAt: at(3.9))
        #expect(bucket == .answering(since: at(4.2)))
        bucket.unanswered(startedAt: at(5))
        #expect(bucket == .silent(since: at(5)))
    }

    @Test func theTableCountsEveryRequestsOutcomeAsAnAnswerOrNone() {
        var table = LeaseTable(node: "a", configuration: configuration)
        let partition = PartitionID(space: .boards, index: 1)
        table.unanswered(startedAt: at(1))
        #expect(table.bucket == .silent(since: at(1)))
        // A read answered: the entry is seen, and the bucket answers.
        #expect(table.read(partition, value: record("b", term: 3).encoded(), revision: 3, startedAt: at(2), now: at(2.1)).isEmpty)
        #expect(table.bucket == .answering(since: at(2.1)))
        #expect(table.observations[partition]?.revision == 3)
        table.unanswered(startedAt: at(3))
        // A refused compare-and-set is an answer.
        table.answered(startedAt: at(4), now: at(4.1))
        #expect(table.bucket == .answering(since: at(4.1)))
        table.unanswered(startedAt: at(5))
        // So is a take stored, and a renewal stored.
        _ = table.took(partition, revision: 7, startedAt: at(6), value: record("a").encoded(), now: at(6.1))
        #expect(table.bucket == .answering(since: at(6.1)))
        table.unanswered(startedAt: at(7))
        table.renewed(partition, revision: 8, startedAt: at(8), value: record("a", term: 7).encoded(), now: at(8.1))
        #expect(table.bucket == .answering(since: at(8.1)))
        #expect(table.holdings[partition]?.renewedAt == at(8))
        // The table plans with what it knows of the bucket: silent, its holding lives on heartbeats.
        table.unanswered(startedAt: at(9))
        #expect(table.plan(map: map, partitions: [partition], liveNodes: [:], lastHeartbeat: at(20), now: at(25.9))
                == [.renew(partition, revision: 8)])
        #expect(table.plan(map: map, partitions: [partition], liveNodes: [:], lastHeartbeat: at(20), now: at(26))
                == [.abandon(partition)])
    }

    /// Whatever the timing, another node plans to take a lease over only once its holder has
    /// stopped serving it: the other sees each of the holder's writes no earlier than the write
    /// began, and hears of its heartbeats no earlier either.
    @Test func nobodyTakesOverALeaseItsHolderStillServes() {
        var random = SeededGenerator(seed: 15)
        let (mine, _) = partitions(preferring: "a", among: ["a", "b"])
        for _ in 0..<600 {
            let renewedAt = Double.random(in: 0...10, using: &random)
            // The holder's last stored heartbeat, before or after its last renewal.
            let heartbeatAt = renewedAt + Double.random(in: -3...14, using: &random)
            let holding = LeaseHolding(partition: mine, term: 5, revision: 8, renewedAt: at(renewedAt))
            let deadline = LeasePlanner.servingDeadline(of: holding, lastHeartbeat: at(heartbeatAt),
                                                        configuration: configuration)
            // The other node sees the renewal and the heartbeat each a little later.
            let seenAt = renewedAt + Double.random(in: 0...1, using: &random)
            var liveness = NodeLiveness(duration: configuration.duration)
            liveness.observe("b", revision: 1, isDeleted: false, now: at(heartbeatAt - 30))
            liveness.observe("b", revision: 2, isDeleted: false, now: at(heartbeatAt + Double.random(in: 0...1, using: &random)))
            let seen = [mine: LeaseObservation(record: record("b", term: 5), revision: 8, since: at(seenAt))]
            var now = max(seenAt, heartbeatAt)
            while now < renewedAt + 20 {
                let actions = LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: seen, holdings: [:],
                                                liveNodes: liveness.liveNodes(now: at(now)), now: at(now),
                                                configuration: configuration)
                if actions.contains(.takeOver(mine, revision: 8)) {
                    #expect(at(now) >= deadline, "taken over at \(now) s, served until \(deadline)")
                    break
                }
                now += 0.05
            }
            #expect(now < renewedAt + 20, "a lease whose holder stopped everything is taken over in the end")
        }
    }

    @Test func aPartitionGoesBackToTheNodeRankedFirstOnceItHasBeenLiveForTheGrace() {
        let nodes = ["a", "b"]
        let (_, theirs) = partitions(preferring: "a", among: nodes)
        let holding = [theirs: LeaseHolding(partition: theirs, term: 5, revision: 8, renewedAt: at(10))]
        let seen = [theirs: LeaseObservation(record: record("a", term: 5), revision: 8, since: at(10))]
        // b ranks first for `theirs` and came back at 8 s: handed back at 14 s, not before.
        #expect(plan("a", leases: seen, holdings: holding, live: ["b": at(8)], now: 13.9) == [.renew(theirs, revision: 8)])
        #expect(plan("a", leases: seen, holdings: holding, live: ["b": at(8)], now: 14) == [.handBack(theirs, revision: 8)])
        // Not to a node that is not live.
        #expect(plan("a", leases: seen, holdings: holding, live: [:], now: 14) == [.renew(theirs, revision: 8)])
    }

    @Test func handBacksAreLimitedPerRound() {
        let nodes = ["a", "b"]
        let placement = map.placement(of: partitions, among: nodes)
        let theirs = partitions.filter { placement[$0] == "b" }
        #expect(theirs.count >= 2, "the test needs two partitions ranked first by b")
        var holdings: [PartitionID: LeaseHolding] = [:]
        for partition in theirs { holdings[partition] = LeaseHolding(partition: partition, term: 1, revision: 1, renewedAt: at(9)) }
        let actions = plan("a", leases: [:], holdings: holdings, live: ["b": at(0)], now: 10)
        #expect(actions.filter { if case .handBack = $0 { true } else { false } }.count == 1)
    }

    /// While its holder stops serving a partition it hands back (which may take longer than a
    /// lease: the stop waits for a recovery under way), the lease is renewed until its key is
    /// deleted, and no other hand-back starts beside it.
    @Test func aPartitionBeingHandedBackIsRenewedAndHoldsUpTheNextHandBack() {
        let nodes = ["a", "b"]
        let placement = map.placement(of: partitions, among: nodes)
        let theirs = partitions.filter { placement[$0] == "b" }
        #expect(theirs.count >= 2, "the test needs two partitions ranked first by b")
        var holdings: [PartitionID: LeaseHolding] = [:]
        for partition in theirs { holdings[partition] = LeaseHolding(partition: partition, term: 1, revision: 1, renewedAt: at(9)) }
        func plan(handingBack: Set<PartitionID>, now: Double) -> [LeaseAction] {
            LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: [:], holdings: holdings,
                              liveNodes: ["b": at(0)], handingBack: handingBack, now: at(now), configuration: configuration)
        }
        #expect(plan(handingBack: [], now: 10) == [.handBack(theirs[0], revision: 1)])
        // The stop under way: nothing more to do before the renewal is due, then the renewal.
        #expect(plan(handingBack: [theirs[0]], now: 10.5).isEmpty)
        #expect(plan(handingBack: [theirs[0]], now: 11) == theirs.map { .renew($0, revision: 1) })
        // Once it is handed back (no longer held), the next one goes.
        holdings[theirs[0]] = nil
        #expect(plan(handingBack: [theirs[0]], now: 10.5) == [.handBack(theirs[1], revision: 1)])
    }

    @Test func withNoHandBacksAHolderKeepsWhatAReturningNodeRanksFirst() {
        let (_, theirs) = partitions(preferring: "a", among: ["a", "b"])
        let holding = [theirs: LeaseHolding(partition: theirs, term: 5, revision: 8, renewedAt: at(10))]
        let seen = [theirs: LeaseObservation(record: record("a", term: 5), revision: 8, since: at(10))]
        let keeping = LeaseConfiguration(duration: .seconds(6), handBacksPerRound: 0)
        let actions = LeasePlanner.plan(node: "a", map: map, partitions: partitions, leases: seen, holdings: holding,
                                        liveNodes: ["b": at(0)], now: at(14), configuration: keeping)
        #expect(actions == [.renew(theirs, revision: 8)])
    }

    @Test func theTableAdoptsItsOwnLateWriteAndLosesToAnotherNodes() {
        var table = LeaseTable(node: "a", configuration: configuration)
        let partition = PartitionID(space: .boards, index: 3)
        let mine = record("a")
        #expect(table.took(partition, revision: 10, startedAt: at(0), value: mine.encoded(), now: at(0.1))
                == [.acquired(partition, term: 10)])
        // Older entries arriving late change nothing.
        #expect(table.observe(partition, value: nil, revision: 4, now: at(0.2)).isEmpty)
        #expect(table.holdings[partition]?.revision == 10)
        // A renewal of this node's whose acknowledgement was lost: same node, same term.
        #expect(table.observe(partition, value: record("a", term: 10).encoded(), revision: 12, now: at(1)).isEmpty)
        #expect(table.holdings[partition]?.revision == 12)
        // Somebody else's write.
        #expect(table.observe(partition, value: record("b").encoded(), revision: 15, now: at(2))
                == [.lost(partition, reason: .takenOver)])
        #expect(table.holdings[partition] == nil)
        #expect(table.observations[partition]?.record?.node == "b")
        // A value that is not a lease record counts as held by nobody known, for one lease time.
        _ = table.observe(partition, value: Array("garbage".utf8), revision: 20, now: at(3))
        #expect(table.observations[partition]?.record?.node == "")
        #expect(table.plan(map: map, partitions: [partition], liveNodes: [:], now: at(8.9)).isEmpty)
        #expect(table.plan(map: map, partitions: [partition], liveNodes: [:], now: at(9)) == [.takeOver(partition, revision: 20)])
    }

    @Test func aRecordRoundTripsAndForeignValuesAreRefused() {
        let value = LeaseRecord(node: "node-1", term: 77, durationMilliseconds: 1_500, journalSequence: 12)
        #expect(LeaseRecord(decoding: value.encoded()) == value)
        #expect(LeaseRecord(decoding: Array(#"{"node":"x"}"#.utf8)) == nil)
        #expect(LeaseRecord(decoding: Array(#"{"node":"","term":1,"lease_ms":5}"#.utf8)) == nil)
        #expect(LeaseRecord(decoding: []) == nil)
        #expect(value.term(atRevision: 90) == 77)
        #expect(LeaseRecord(node: "n", term: 0, durationMilliseconds: 1).term(atRevision: 90) == 90)
        #expect(LeaseConfiguration(duration: .milliseconds(1_500)).durationMilliseconds == 1_500)
    }

    @Test func aNodeIsLiveWhileItsHeartbeatChangesWithinALease() {
        var liveness = NodeLiveness(duration: .seconds(6))
        liveness.observe("b", revision: 1, isDeleted: false, now: at(0))
        liveness.observe("b", revision: 5, isDeleted: false, now: at(5))
        #expect(liveness.liveNodes(now: at(10.9)) == ["b": at(0)])
        #expect(liveness.liveNodes(now: at(11)).isEmpty)
        // Back after a break: live since its return.
        liveness.observe("b", revision: 9, isDeleted: false, now: at(20))
        #expect(liveness.liveNodes(now: at(21)) == ["b": at(20)])
        // An old entry read late does not revive it; a delete (clean leave) ends it at once.
        liveness.observe("b", revision: 12, isDeleted: true, now: at(22))
        liveness.observe("b", revision: 11, isDeleted: false, now: at(22))
        #expect(liveness.liveNodes(now: at(22)).isEmpty)
    }

    @Test func leaseKeysNameOnlyPartitionsOfTheMap() {
        #expect(LeaseManager.partition(named: "p3", count: 8) == PartitionID(space: .boards, index: 3))
        #expect(LeaseManager.partition(named: "a7", count: 8) == PartitionID(space: .accounts, index: 7))
        for key in ["p8", "p03", "x1", "p", "p-1", "node-a"] { #expect(LeaseManager.partition(named: key, count: 8) == nil, "\(key)") }
    }
}
