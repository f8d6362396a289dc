// Two nodes' lease rounds, on a simulated clock, against a model of the leases bucket that has no
// leader for a while: what LeaseTable and LeasePlanner decide when their requests are answered,
// refused or go unanswered, with the latencies, lost acknowledgements and stalled watches a NATS
// leader election brings. No NATS and no sleeping: seeded timelines, each checked for
// - an election alone (of any length, at any point of the renewal cycle) costing nobody a lease;
// - a holder that really died being replaced within about L of the election ending, or of its
//   death if that came later;
// - a holder cut off from NATS (its heartbeats fail too) stopping within L, and nobody taking its
//   lease before it stopped.
import Testing
import TestSupport
@testable import Cluster

@Suite struct LeaseTimelineTests {
    static let shapes = [(1_000, true), (1_000, false), (6_000, true), (6_000, false)]

    @Test(arguments: shapes)
    func anElectionOfTheLeasesBucketAloneCostsNobodyALease(leaseMilliseconds: Int, standby: Bool) {
        var random = SeededGenerator(seed: 37 + UInt64(leaseMilliseconds) + (standby ? 1 : 0))
        let lease = Double(leaseMilliseconds) / 1_000
        for round in 0..<200 {
            // Every other election ends about when a take-over would have been due before.
            let lengths = round.isMultiple(of: 2) ? 0.05...20 : (3 * lease)...(5 * lease)
            let failures = Self.electionAlone(leaseMilliseconds: leaseMilliseconds, standby: standby, lasting: lengths,
                                              random: &random)
            #expect(failures.isEmpty, "\(failures)")
        }
    }

    /// The checks can fail, and each part of the rule is needed: planning as if the bucket
    /// always answered (a silence counts against a lease like any other time, as before the
    /// bucket's state was counted), or a standby that never reads the key while a lease is
    /// overdue (so its clock runs through an election it never asked about, and its first
    /// take-over attempt, due 4 L after the last renewal it saw, may come just after a new leader
    /// and before the holder's renewal), costs a holder its lease in some timelines: elections of
    /// about 4 L here.
    @Test func withoutEachPartOfTheRuleAnElectionCostsALease() {
        for (ignoresTheBucket, makesNoProbes) in [(true, false), (false, true)] {
            var random = SeededGenerator(seed: 53)
            var failed = 0
            for _ in 0..<150 {
                let failures = Self.electionAlone(leaseMilliseconds: 1_000, standby: true, lasting: 3.5...4.5,
                                                  random: &random) { timeline in
                    timeline.ignoresTheBucket = ignoresTheBucket
                    timeline.makesNoProbes = makesNoProbes
                }
                if !failures.isEmpty { failed += 1 }
            }
            print("LeaseTimelineTests: ignoring the bucket \(ignoresTheBucket), no probes \(makesNoProbes): \(failed) of 150 timelines fail")
            #expect(failed > 0, "ignoring the bucket: \(ignoresTheBucket), no probes: \(makesNoProbes)")
        }
    }

    /// One timeline of an election of random length at a random point of the renewal cycle, the
    /// taker's watch stalled with it half the time; what went wrong in it.
    static func electionAlone(leaseMilliseconds: Int, standby: Bool, lasting lengths: ClosedRange<Double> = 0.05...20,
                              random: inout SeededGenerator,
                              altering alter: (inout LeaseTimeline) -> Void = { _ in }) -> [String] {
        var timeline = LeaseTimeline(leaseMilliseconds: leaseMilliseconds, standby: standby, random: &random)
        alter(&timeline)
        let lease = timeline.lease
        let electionStart = 3 + Double.random(in: 0...lease, using: &random)
        let electionEnd = electionStart + Double.random(in: lengths, using: &random)
        timeline.leaderless = electionStart..<electionEnd
        if Bool.random(using: &random) {
            // The taker's watch of the leases stalls with the leader, and restarts late.
            timeline.stalledWatch = (timeline.taker, electionStart..<(electionEnd + Double.random(in: 0...4, using: &random)))
        }
        timeline.run(until: electionEnd + 4 * lease + 1)
        var failures: [String] = []
        let story = timeline.story
        if !timeline.losses.isEmpty { failures.append("\(story): lost \(timeline.losses)") }
        if !timeline.takeOvers.isEmpty { failures.append("\(story): a live holder's lease taken over: \(timeline.takeOvers)") }
        if !timeline.earlyTakeOvers.isEmpty { failures.append("\(story): taken over while served: \(timeline.earlyTakeOvers)") }
        let renewedAfter = timeline.stored.first { $0.node == timeline.holder && $0.time >= electionEnd }?.time
        if !(renewedAfter.map { $0 <= electionEnd + lease / 2 } ?? false) {
            failures.append("\(story): the holder's first renewal after the election at \(String(describing: renewedAfter))")
        }
        return failures
    }

    @Test(arguments: shapes)
    func aHolderThatDiedIsReplacedAboutALeaseAfterTheElectionOrItsDeath(leaseMilliseconds: Int, standby: Bool) {
        var random = SeededGenerator(seed: 41 + UInt64(leaseMilliseconds) + (standby ? 1 : 0))
        for _ in 0..<150 {
            var timeline = LeaseTimeline(leaseMilliseconds: leaseMilliseconds, standby: standby, random: &random)
            let lease = timeline.lease
            let electionStart = 3 + Double.random(in: 0...lease, using: &random)
            let electionEnd = electionStart + Double.random(in: 0.05...20, using: &random)
            timeline.leaderless = electionStart..<electionEnd
            let death = Double.random(in: (electionStart - lease)...(electionEnd + lease), using: &random)
            timeline.dies(timeline.holder, at: death)
            timeline.run(until: max(death, electionEnd) + 4 * lease)
            let story = timeline.story + ", holder died at \(death)"
            let takeOver = timeline.takeOvers.first
            #expect(takeOver?.node == timeline.taker && takeOver?.partition == timeline.heldByHolder, "\(story)")
            if let at = takeOver?.time {
                #expect(at <= max(death + lease, electionEnd) + lease / 2, "\(story): taken over at \(at)")
            }
            #expect(timeline.losses.filter { $0.node == timeline.taker }.isEmpty, "\(story): \(timeline.losses)")
        }
    }

    @Test(arguments: shapes)
    func aHolderCutOffFromNATSStopsWithinALeaseBeforeAnyoneTakesItsLease(leaseMilliseconds: Int, standby: Bool) {
        var random = SeededGenerator(seed: 43 + UInt64(leaseMilliseconds) + (standby ? 1 : 0))
        for _ in 0..<150 {
            var timeline = LeaseTimeline(leaseMilliseconds: leaseMilliseconds, standby: standby, random: &random)
            let lease = timeline.lease
            let cut = 3 + Double.random(in: 0...lease, using: &random)
            timeline.cutsOff(timeline.holder, at: cut)
            timeline.run(until: cut + 4 * lease)
            let story = timeline.story + ", holder cut off at \(cut)"
            let abandoned = timeline.losses.first { $0.node == timeline.holder && $0.reason == .expired }?.time
            let takeOver = timeline.takeOvers.first { $0.partition == timeline.heldByHolder }?.time
            #expect(abandoned.map { $0 <= cut + lease + timeline.tick } == true, "\(story): stopped at \(String(describing: abandoned))")
            #expect(takeOver.map { $0 <= cut + 2 * lease } == true, "\(story): taken over at \(String(describing: takeOver))")
            #expect(timeline.earlyTakeOvers.isEmpty, "\(story): taken over while its holder served: \(timeline.earlyTakeOvers)")
        }
    }
}

/// Nodes `a` and `b`, each holding the one of two partitions the placement gives it, and a
/// model of the leases bucket (one leader, or none during `leaderless`) and of the nodes bucket
/// (always led: heartbeats land unless their node is cut off). Times are seconds from the start.
struct LeaseTimeline {
    struct Stored: Equatable { var node: String; var partition: PartitionID; var time: Double; var isTakeOver: Bool }
    struct Loss: Equatable { var node: String; var partition: PartitionID; var reason: LeaseEvent.LossReason; var time: Double }

    let configuration: LeaseConfiguration
    let lease: Double
    let tick: Double
    let timeout: Double
    let map: PartitionMap
    let partitions: [PartitionID]
    /// The node holding `heldByHolder`, whose fate the tests decide; the other stays well.
    let holder: String
    let taker: String
    let heldByHolder: PartitionID
    var leaderless: Range<Double> = 0..<0
    var stalledWatch: (node: String, during: Range<Double>)?
    /// Plans as if the bucket always answered: the rule before the bucket's state was counted.
    var ignoresTheBucket = false
    /// Never reads a key to learn whether the bucket answers.
    var makesNoProbes = false
    private(set) var stored: [Stored] = []
    private(set) var losses: [Loss] = []
    /// Take-overs stored while their holder, alive, could still serve by its own reckoning.
    private(set) var earlyTakeOvers: [Stored] = []
    var takeOvers: [Stored] { stored.filter(\.isTakeOver) }

    private let start = ContinuousClock.now
    private var random: SeededGenerator
    private var nodes: [String: Node] = [:]
    private var entries: [PartitionID: (record: LeaseRecord?, revision: UInt64)] = [:]
    private var lastRevision: UInt64 = 0
    private var heartbeatRevision: UInt64 = 0
    private var queue: [(time: Double, order: Int, event: Event)] = []
    private var order = 0
    private var deaths: [String: Double] = [:]
    private var cuts: [String: Double] = [:]

    private struct Node {
        var table: LeaseTable
        var liveness: NodeLiveness
        var lastHeartbeat: Double?
        var isHeartbeating = false
        var isDead = false
        var isCutOff = false
    }

    private enum Request {
        case write(LeaseAction)
        case read(PartitionID)
    }

    private enum Outcome {
        case stored(UInt64)
        case refused
        case read(LeaseRecord?, UInt64)
        case unanswered
    }

    private enum Event {
        case round(String)
        case heartbeatTick(String)
        case heartbeatEnded(String, startedAt: Double, landed: Bool)
        case heartbeatSeen(observer: String, of: String, revision: UInt64)
        case applied(String, Request, startedAt: Double, roundTrip: Double)
        case answered(String, Request, startedAt: Double, Outcome)
        case delivered(String, PartitionID, LeaseRecord?, UInt64)
        case dies(String)
        case cutOff(String)
    }

    var story: String {
        "L = \(lease) s, leases bucket leaderless \(leaderless.lowerBound)..<\(leaderless.upperBound)"
            + (stalledWatch.map { ", \($0.node)'s watch stalled until \($0.during.upperBound)" } ?? "")
    }

    /// With `standby`, one partition, which the taker does not hold (a standby, as with one
    /// pair); else two, one each, so each node is a holder and a taker.
    init(leaseMilliseconds: Int, standby: Bool = false, random: inout SeededGenerator) {
        map = PartitionMap(partitionCount: standby ? 1 : 2)
        partitions = (0..<map.partitionCount).map { PartitionID(space: .boards, index: $0) }
        configuration = LeaseConfiguration(duration: .milliseconds(leaseMilliseconds), handBacksPerRound: 0)
        lease = Double(leaseMilliseconds) / 1_000
        tick = lease / 12
        timeout = Double(configuration.writeTimeoutMilliseconds) / 1_000
        self.random = SeededGenerator(seed: random.next())
        let placement = map.placement(of: partitions, among: ["a", "b"])
        heldByHolder = partitions[0]
        holder = placement[partitions[0]]!
        taker = holder == "a" ? "b" : "a"
        precondition(standby || placement[partitions[1]] == taker, "the placement spreads two partitions over two nodes")
        for name in ["a", "b"] {
            nodes[name] = Node(table: LeaseTable(node: name, configuration: configuration),
                               liveness: NodeLiveness(duration: configuration.duration))
        }
        // Each holds its partition from the start, renewed then; each has seen the other's heartbeat.
        for partition in partitions {
            let owner = placement[partition]!
            lastRevision += 1
            let record = LeaseRecord(node: owner, term: 0, durationMilliseconds: Int64(leaseMilliseconds))
            entries[partition] = (record, lastRevision)
            _ = nodes[owner]!.table.took(partition, revision: lastRevision, startedAt: at(0), value: record.encoded(), now: at(0))
            let other = owner == "a" ? "b" : "a"
            nodes[other]!.table.observe(partition, value: record.encoded(), revision: lastRevision, now: at(0))
        }
        for name in ["a", "b"] {
            nodes[name]!.lastHeartbeat = 0
            heartbeatRevision += 1
            nodes[name == "a" ? "b" : "a"]!.liveness.observe(name, revision: heartbeatRevision, isDeleted: false, now: at(0))
            schedule(Double.random(in: 0...tick, using: &self.random), .round(name))
            schedule(Double.random(in: 0...tick, using: &self.random), .heartbeatTick(name))
        }
    }

    mutating func dies(_ node: String, at time: Double) {
        deaths[node] = time
        schedule(time, .dies(node))
    }

    mutating func cutsOff(_ node: String, at time: Double) {
        cuts[node] = time
        schedule(time, .cutOff(node))
    }

    mutating func run(until end: Double) {
        while let next = queue.indices.min(by: { (queue[$0].time, queue[$0].order) < (queue[$1].time, queue[$1].order) }) {
            let (time, _, event) = queue.remove(at: next)
            if time > end { return }
            handle(event, at: time)
        }
    }

    private func at(_ seconds: Double) -> ContinuousClock.Instant { start + .microseconds(Int64(seconds * 1_000_000)) }

    private mutating func schedule(_ time: Double, _ event: Event) {
        order += 1
        queue.append((time, order, event))
    }

    private func hasLeader(at time: Double) -> Bool { !leaderless.contains(time) }

    private mutating func latency() -> Double { Double.random(in: 0.001...0.02, using: &random) }

    private mutating func handle(_ event: Event, at now: Double) {
        switch event {
        case .dies(let name):
            nodes[name]!.isDead = true
        case .cutOff(let name):
            nodes[name]!.isCutOff = true
        case .round(let name):
            guard !nodes[name]!.isDead else { return }
            round(name, at: now)
        case .heartbeatTick(let name):
            guard !nodes[name]!.isDead else { return }
            // LeaseManager's clock: the abandons every tick, whatever the round waits on.
            for case .abandon(let partition) in plan(name, at: now) {
                note(name, nodes[name]!.table.release(partition, reason: .expired), at: now)
            }
            let node = nodes[name]!
            if !node.isHeartbeating, node.lastHeartbeat.map({ now - $0 >= lease / 3 }) ?? true {
                nodes[name]!.isHeartbeating = true
                if node.isCutOff {
                    schedule(now + timeout, .heartbeatEnded(name, startedAt: now, landed: false))
                } else {
                    schedule(now + latency(), .heartbeatEnded(name, startedAt: now, landed: true))
                }
            }
            schedule(now + tick, .heartbeatTick(name))
        case .heartbeatEnded(let name, let startedAt, let landed):
            guard !nodes[name]!.isDead else { return }
            nodes[name]!.isHeartbeating = false
            guard landed else { return }
            nodes[name]!.lastHeartbeat = startedAt
            heartbeatRevision += 1
            let other = name == "a" ? "b" : "a"
            schedule(now + latency(), .heartbeatSeen(observer: other, of: name, revision: heartbeatRevision))
        case .heartbeatSeen(let observer, let name, let revision):
            nodes[observer]!.liveness.observe(name, revision: revision, isDeleted: false, now: at(now))
        case .applied(let name, let request, let startedAt, let roundTrip):
            let outcome = apply(request, by: name, at: now)
            if hasLeader(at: startedAt + roundTrip) {
                schedule(startedAt + roundTrip, .answered(name, request, startedAt: startedAt, outcome))
            } else {
                // Stored (or refused) as the leader died: the acknowledgement is lost.
                schedule(startedAt + timeout, .answered(name, request, startedAt: startedAt, .unanswered))
            }
        case .answered(let name, let request, let startedAt, let outcome):
            guard !nodes[name]!.isDead else { return }
            answered(name, request, startedAt: startedAt, outcome, at: now)
        case .delivered(let name, let partition, let record, let revision):
            guard !nodes[name]!.isDead else { return }
            note(name, nodes[name]!.table.observe(partition, value: record?.encoded(), revision: revision, now: at(now)), at: now)
        }
    }

    private func plan(_ name: String, at now: Double) -> [LeaseAction] {
        let node = nodes[name]!
        return LeasePlanner.plan(node: name, map: map, partitions: partitions, leases: node.table.observations,
                                 holdings: node.table.holdings, liveNodes: node.liveness.liveNodes(now: at(now)),
                                 lastHeartbeat: node.lastHeartbeat.map(at), bucket: bucket(of: name), now: at(now),
                                 configuration: configuration)
    }

    private func bucket(of name: String) -> LeaseBucketState {
        ignoresTheBucket ? .answering(since: nil) : nodes[name]!.table.bucket
    }

    private mutating func round(_ name: String, at now: Double) {
        var request: LeaseAction?
        for action in plan(name, at: now) {
            switch action {
            case .abandon(let partition):
                note(name, nodes[name]!.table.release(partition, reason: .expired), at: now)
            case .handBack:
                Issue.record("no hand-backs in these timelines")
            case .probe where makesNoProbes:
                continue
            case .take, .takeOver, .renew, .probe:
                if request == nil { request = action }
            }
        }
        guard let request else {
            schedule(now + tick, .round(name))
            return
        }
        if case .probe(let partition) = request {
            send(.read(partition), by: name, at: now)
        } else {
            send(.write(request), by: name, at: now)
        }
    }

    private mutating func send(_ request: Request, by name: String, at now: Double) {
        let roundTrip = latency()
        if nodes[name]!.isCutOff || !hasLeader(at: now + roundTrip / 2) {
            schedule(now + timeout, .answered(name, request, startedAt: now, .unanswered))
        } else {
            schedule(now + roundTrip / 2, .applied(name, request, startedAt: now, roundTrip: roundTrip))
        }
    }

    /// The bucket's side: the compare-and-set, against the key's revision.
    private mutating func apply(_ request: Request, by name: String, at now: Double) -> Outcome {
        switch request {
        case .read(let partition):
            let entry = entries[partition]
            return .read(entry?.record, entry?.revision ?? 0)
        case .write(let action):
            let partition: PartitionID
            let expected: UInt64?
            var term: UInt64 = 0
            switch action {
            case .take(let taken):
                partition = taken
                expected = nil
            case .takeOver(let taken, let revision):
                partition = taken
                expected = revision
            case .renew(let renewed, _):
                partition = renewed
                guard let holding = nodes[name]!.table.holdings[renewed] else { return .refused }
                expected = holding.revision
                term = holding.term
            default:
                fatalError("internal inconsistency in the timeline: \(action) is not a write")
            }
            let entry = entries[partition]
            if let expected {
                guard entry?.revision == expected else { return .refused }
            } else {
                guard entry?.record == nil else { return .refused }
            }
            lastRevision += 1
            let record = LeaseRecord(node: name, term: term, durationMilliseconds: Int64(lease * 1_000))
            entries[partition] = (record, lastRevision)
            var isTakeOver = false
            if case .takeOver = action { isTakeOver = true }
            // Nobody takes a lease over before the holder's serving deadline, as the holder
            // reckons it now (it gives the lease up within a tick of that).
            if let previous = entry?.record?.node, previous != name, let holder = nodes[previous], !holder.isDead,
               let holding = holder.table.holdings[partition] {
                let deadline = LeasePlanner.servingDeadline(of: holding, lastHeartbeat: holder.lastHeartbeat.map(at),
                                                            bucket: bucket(of: previous), configuration: configuration)
                if at(now) < deadline { earlyTakeOvers.append(Stored(node: name, partition: partition, time: now, isTakeOver: true)) }
            }
            stored.append(Stored(node: name, partition: partition, time: now, isTakeOver: isTakeOver))
            for (other, node) in nodes where !node.isDead {
                var delivery = now + latency()
                if let stalled = stalledWatch, stalled.node == other, stalled.during.contains(delivery) {
                    delivery = stalled.during.upperBound + latency()
                }
                schedule(delivery, .delivered(other, partition, record, lastRevision))
            }
            return .stored(lastRevision)
        }
    }

    /// The node's side: what LeaseManager tells its table, then the next round a tick later.
    private mutating func answered(_ name: String, _ request: Request, startedAt: Double, _ outcome: Outcome, at now: Double) {
        switch (request, outcome) {
        case (_, .unanswered):
            nodes[name]!.table.unanswered(startedAt: at(startedAt))
        case (.read(let partition), .read(let record, let revision)):
            note(name, nodes[name]!.table.read(partition, value: record?.encoded(), revision: revision,
                                               startedAt: at(startedAt), now: at(now)), at: now)
        case (.write(let action), .stored(let revision)):
            let value = LeaseRecord(node: name, term: 0, durationMilliseconds: Int64(lease * 1_000)).encoded()
            switch action {
            case .take(let partition), .takeOver(let partition, _):
                note(name, nodes[name]!.table.took(partition, revision: revision, startedAt: at(startedAt), value: value, now: at(now)),
                     at: now)
            case .renew(let partition, _):
                let term = nodes[name]!.table.holdings[partition]?.term ?? 0
                nodes[name]!.table.renewed(partition, revision: revision, startedAt: at(startedAt),
                                           value: LeaseRecord(node: name, term: term, durationMilliseconds: Int64(lease * 1_000)).encoded(),
                                           now: at(now))
            default:
                fatalError("internal inconsistency in the timeline: \(action) stored")
            }
        case (.write(let action), .refused):
            nodes[name]!.table.answered(startedAt: at(startedAt), now: at(now))
            // As LeaseManager does: the key is read at once, and its entry tells what was lost.
            switch action {
            case .take(let partition), .takeOver(let partition, _), .renew(let partition, _):
                send(.read(partition), by: name, at: now)
                return
            default:
                fatalError("internal inconsistency in the timeline: \(action) refused")
            }
        default:
            fatalError("internal inconsistency in the timeline: \(outcome) for \(request)")
        }
        schedule(now + tick, .round(name))
    }

    private mutating func note(_ name: String, _ events: [LeaseEvent], at now: Double) {
        for case .lost(let partition, let reason) in events {
            losses.append(Loss(node: name, partition: partition, reason: reason, time: now))
        }
    }
}
