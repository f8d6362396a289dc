// Leases against a real 3-node JetStream cluster, with short lease times: one winner per contested
// lease (L = 1.5 s), and (L = 4 s, so the bounds below stay clear of a busy machine's delays)
// takeover of a silent holder's partitions within about L, hand-back when the preferred node
// returns, and a clean leave that does not wait for expiry; and a holder keeping its partitions
// through a leader election of the leases bucket alone.
import Foundation
@testable import NATSClient
import NATSTestSupport
import Synchronization
import Testing
@testable import Cluster

@Suite(.serialized, .timeLimit(.minutes(2))) struct LeaseIntegrationTests {
    let configuration = LeaseConfiguration(duration: .milliseconds(1_500))
    let failover = LeaseConfiguration(duration: .milliseconds(4_000))
    let map = PartitionMap(partitionCount: 4)
    var boards: [PartitionID] { (0..<4).map { PartitionID(space: .boards, index: $0) } }

    @Test func ofTwoContendersForALeaseExactlyOneWinsAndTheLoserOfACompareAndSetHasLostIt() async throws {
        try await withCluster { cluster in
            let first = try await connectClient(to: cluster, first: 0, name: "node-a")
            let second = try await connectClient(to: cluster, first: 2, name: "node-b")
            let bucketA = try await PartitionLease.makeBucket(in: JetStream(connection: first))
            let bucketB = try await KeyValueBucket.open(PartitionLease.bucketName, in: JetStream(connection: second))
            for index in 0..<10 {
                let partition = PartitionID(space: .boards, index: index)
                let a = PartitionLease(partition: partition, node: "a", bucket: bucketA, configuration: configuration)
                let b = PartitionLease(partition: partition, node: "b", bucket: bucketB, configuration: configuration)
                async let takenByA = outcome { () async throws(LeaseError) in try await a.take() }
                async let takenByB = outcome { () async throws(LeaseError) in try await b.take() }
                let takes = await [takenByA, takenByB]
                let winners = takes.compactMap { try? $0.get() }
                #expect(winners.count == 1, "partition \(index): take")
                for case .failure(let error) in takes { #expect(error == .heldElsewhere(partition)) }
                let holding = try #require(winners.first)
                let (holder, other) = (try? takes[0].get()) != nil ? (a, b) : (b, a)
                let storedValue = try await holder.read().value
                let stored = try #require(storedValue.flatMap(LeaseRecord.init(decoding:)))
                #expect(stored.node == holder.node)
                #expect(stored.term(atRevision: holding.revision) == holding.term)

                let renewed = try await holder.renew(holding)
                #expect(renewed.term == holding.term && renewed.revision > holding.revision)
                // The other takes it over from the revision it saw; the holder's renewal from its
                // own, now old, revision is refused: it has lost the lease.
                let takenOver = try await other.takeOver(from: renewed.revision)
                #expect(takenOver.term > holding.term)
                await #expect(throws: LeaseError.heldElsewhere(partition)) { try await holder.renew(renewed) }
                await #expect(throws: LeaseError.heldElsewhere(partition)) { try await holder.release(renewed) }
                try await other.release(takenOver)
                #expect(try await other.read().value == nil)
            }
            await first.close()
            await second.close()
        }
    }

    @Test func aSilentHoldersPartitionsAreTakenWithinALeaseAndMoveBackWhenItReturns() async throws {
        try await withCluster { cluster in
            let clientA = try await connectClient(to: cluster, first: 0, name: "node-a")
            let clientB = try await connectClient(to: cluster, first: 1, name: "node-b")
            let a = try await LeaseManager.start(node: "a", map: map, partitions: boards, jetStream: JetStream(connection: clientA),
                                                 configuration: failover)
            // What b's hand-backs find while b stops serving: the lease key, still b's, and a2's holdings.
            let probe = try await KeyValueBucket.open(PartitionLease.bucketName, in: JetStream(connection: clientB))
            let returning = Mutex<LeaseManager?>(nil)
            let preparations = Mutex<[PartitionID: (keyHolder: String?, takenAlready: Bool)]>([:])
            let failover = failover
            let b = try await LeaseManager.start(node: "b", map: map, partitions: boards, jetStream: JetStream(connection: clientB),
                                                 configuration: failover, beforeHandingBack: { partition in
                let lease = PartitionLease(partition: partition, node: "probe", bucket: probe, configuration: failover)
                let holder = try? await lease.read().value.flatMap(LeaseRecord.init(decoding:))?.node
                let taken = await returning.withLock { $0 }?.held.contains(partition) ?? false
                preparations.withLock { $0[partition] = (holder, taken) }
            })
            let preferred = map.placement(of: boards, among: ["a", "b"])
            let ofA = Set(boards.filter { preferred[$0] == "a" })
            let ofB = Set(boards.filter { preferred[$0] == "b" })
            #expect(!ofA.isEmpty && !ofB.isEmpty, "both nodes rank first for some of the four partitions")
            try await eventually(timeoutSeconds: 15, "each node holding the partitions it ranks first for") {
                let (heldByA, heldByB) = (await a.held, await b.held)
                return heldByA == ofA && heldByB == ofB
            }

            // a goes silent (as if killed): b takes its partitions once the leases expire.
            await a.halt()
            let silentAt = Date()
            try await eventually(timeoutSeconds: 20, "b holding every partition") { await b.held == Set(boards) }
            let takeover = Date().timeIntervalSince(silentAt)
            print("LeaseIntegrationTests: takeover of a silent node's partitions after \(String(format: "%.2f", takeover)) s (L = 4 s)")
            // Its last renewal was at most L/3 plus a tick (L/12) before it went silent, so no
            // lease could expire before L − 5L/12 ≈ 2.33 s.
            #expect(takeover >= 2.2, "taken before the leases could have expired")
            #expect(takeover < 12, "takeover took more than three lease times")

            // a comes back (a new process, same id): after the grace, b hands its partitions back.
            let clientA2 = try await connectClient(to: cluster, first: 2, name: "node-a-again")
            let a2 = try await LeaseManager.start(node: "a", map: map, partitions: boards, jetStream: JetStream(connection: clientA2),
                                                  configuration: failover)
            returning.withLock { $0 = a2 }
            try await eventually(timeoutSeconds: 20, "the partitions moving back to a") {
                let (heldByA, heldByB) = (await a2.held, await b.held)
                return heldByA == ofA && heldByB == ofB
            }
            var eventsOfB: [LeaseEvent] = []
            // A clean leave: the other takes its partitions at once, without waiting for expiry.
            await b.stop()
            for await event in b.events { eventsOfB.append(event) }
            let leftAt = Date()
            try await eventually(timeoutSeconds: 10, "a holding every partition after b left") { await a2.held == Set(boards) }
            // Waiting for expiry would take at least 2.33 s (see above).
            #expect(Date().timeIntervalSince(leftAt) < 2, "a clean leave waited for the leases to expire")
            for partition in ofA {
                #expect(eventsOfB.contains { if case .acquired(partition, _) = $0 { true } else { false } },
                        "b never reported acquiring \(partition)")
                #expect(eventsOfB.contains(.lost(partition, reason: .handedBack)), "b never reported handing back \(partition)")
                // b stopped serving it before deleting its key: nobody could take it meanwhile.
                let prepared = preparations.withLock { $0[partition] }
                #expect(prepared?.keyHolder == "b" && prepared?.takenAlready == false,
                        "\(partition) handed back before b stopped serving it: \(String(describing: prepared))")
            }
            await a2.stop()
            await clientA.close()
            await clientA2.close()
            await clientB.close()
        }
    }

    /// Killing the NATS server that leads the leases bucket (and not the nodes bucket) stalls
    /// every lease write until the bucket elects a leader, longer than L here; the holder's
    /// heartbeats still land, so it keeps serving and nobody takes its partitions over.
    @Test func aHolderKeepsItsPartitionsThroughALeaderElectionOfTheLeasesBucket() async throws {
        try await withCluster { cluster in
            let nodes = try await HolderAndStandby.start(on: cluster, map: map, partitions: boards)
            let (a, b) = (nodes.a, nodes.b)
            let jetStream = JetStream(connection: nodes.clientB)
            let leases = "KV_" + PartitionLease.bucketName
            let heartbeats = "KV_" + LeaseManager.nodesBucketName
            for _ in 0..<30 where try await jetStream.streamInfo(leases).leader == jetStream.streamInfo(heartbeats).leader {
                _ = try? await jetStream.call("STREAM.LEADER.STEPDOWN." + leases)
                try await Task.sleep(for: .milliseconds(500))
            }
            let leaderName = try #require(try await jetStream.streamInfo(leases).leader)
            try #require(leaderName != (try await jetStream.streamInfo(heartbeats).leader), "the two buckets share a leader")
            let leader = try #require(cluster.nodes.firstIndex { $0.name == leaderName })
            let before = try #require(try await KeyValueBucket.open(PartitionLease.bucketName, in: jetStream).get("p0")).revision

            cluster.kill(leader)
            let killedAt = ContinuousClock.now
            try await eventually(timeoutSeconds: 30, "the leases bucket electing a new leader") {
                guard let elected = try? await jetStream.streamInfo(leases).leader else { return false }
                return elected != leaderName
            }
            let election = ContinuousClock.now - killedAt
            print("LeaseIntegrationTests: the leases bucket had no leader for about \(election) (L = 1.5 s)")
            try await eventually(timeoutSeconds: 10, "a renewing again") {
                let entry = try? await KeyValueBucket.open(PartitionLease.bucketName, in: jetStream).get("p0")
                return (entry?.revision ?? 0) > before
            }
            #expect(nodes.eventsOfA.withLock { $0.filter { if case .lost = $0 { true } else { false } } }.isEmpty,
                    "a gave up a partition during the election")
            #expect(await a.held == Set(boards))
            #expect(await b.held.isEmpty, "b took over a live holder's partitions")
            await nodes.stop()
        }
    }

    /// A node whose watch of the nodes bucket has gone silent (its consumer died with a NATS
    /// server, and the meta leader that would make another died too) reads the heartbeats
    /// instead: a holder that died meanwhile is not kept live by what the watch cannot hear, and
    /// its partitions are taken over after about L, not after the live holder's 20 L.
    @Test func aNodeWhoseWatchOfTheNodesIsSilentReadsTheHeartbeatsAndTakesOverFromADeadHolder() async throws {
        try await withCluster { cluster in
            let nodes = try await HolderAndStandby.start(on: cluster, map: map, partitions: boards)
            let (a, b) = (nodes.a, nodes.b)
            try await eventually(timeoutSeconds: 10, "b seeing a live") { await b.liveNodes.contains("a") }
            await b.silenceNodesWatch()
            await a.halt()
            let silentAt = ContinuousClock.now
            try await eventually(timeoutSeconds: 15, "b taking a's partitions") { await b.held == Set(boards) }
            let takeover = ContinuousClock.now - silentAt
            print("LeaseIntegrationTests: takeover with a silent watch of the nodes after \(takeover) (L = 1.5 s)")
            #expect(takeover < .seconds(8), "b waited as if a were live")
            await nodes.stop()
        }
    }
}

/// Node a holding every partition, then node b started beside it: L = 1.5 s, no hand-backs, and
/// a live holder's lease lasting 20 L, so only what a test does moves a lease. a's lease events
/// are recorded from its start.
final class HolderAndStandby: Sendable {
    static let configuration = LeaseConfiguration(duration: .milliseconds(1_500), handBacksPerRound: 0, liveHolderMultiple: 20)
    let a: LeaseManager
    let b: LeaseManager
    let clientA: NATSConnection
    let clientB: NATSConnection
    let eventsOfA = Mutex<[LeaseEvent]>([])
    private let listening = Mutex<Task<Void, Never>?>(nil)

    private init(a: LeaseManager, b: LeaseManager, clientA: NATSConnection, clientB: NATSConnection) {
        (self.a, self.b, self.clientA, self.clientB) = (a, b, clientA, clientB)
    }

    static func start(on cluster: NATSCluster, map: PartitionMap, partitions: [PartitionID]) async throws -> HolderAndStandby {
        let clientA = try await connectClient(to: cluster, first: 0, name: "node-a")
        let clientB = try await connectClient(to: cluster, first: 1, name: "node-b")
        let a = try await LeaseManager.start(node: "a", map: map, partitions: partitions, jetStream: JetStream(connection: clientA),
                                             configuration: configuration)
        try await eventually(timeoutSeconds: 15, "a holding every partition") { await a.held == Set(partitions) }
        let b = try await LeaseManager.start(node: "b", map: map, partitions: partitions, jetStream: JetStream(connection: clientB),
                                             configuration: configuration)
        let nodes = HolderAndStandby(a: a, b: b, clientA: clientA, clientB: clientB)
        nodes.listening.withLock { $0 = Task { for await event in a.events { nodes.eventsOfA.withLock { $0.append(event) } } } }
        return nodes
    }

    func stop() async {
        await b.stop()
        await a.stop()
        listening.withLock { $0 }?.cancel()
        await clientA.close()
        await clientB.close()
    }
}

func outcome<Value>(_ body: () async throws(LeaseError) -> Value) async -> Result<Value, LeaseError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
