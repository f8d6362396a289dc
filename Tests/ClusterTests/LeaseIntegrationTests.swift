// Leases against a real 3-node JetStream cluster, with short lease times: one winner per contested
// lease (L = 1.5 s), and (L = 4 s, so the bounds below stay clear of a busy machine's delays)
// takeover of a silent holder's partitions within about L, hand-back when the preferred node
// returns, and a clean leave that does not wait for expiry; at the shortest lease allowed, a
// holder keeping its partitions through a leader election of the leases bucket (`kill -9` of
// the server leading it), and a holder that died with that server replaced about L after the
// election. One cluster for the suite; each test has buckets of its own, and restores a server
// it killed.
import Foundation
@testable import NATSClient
import NATSTestSupport
import Synchronization
import Testing
@testable import Cluster

@Suite(.serialized, .timeLimit(.minutes(2)), .sharedNATSCluster) struct LeaseIntegrationTests {
    let configuration = LeaseConfiguration(duration: .milliseconds(1_500))
    let failover = LeaseConfiguration(duration: .milliseconds(4_000))
    /// As a deployment at the shortest `--lease-ms` runs: no hand-backs (one partition's
    /// deployment), a live holder's lease lasting the default three lease times of answers.
    static let shortest = LeaseConfiguration(duration: LeaseConfiguration.shortestDuration, handBacksPerRound: 0)
    let map = PartitionMap(partitionCount: 4)
    var boards: [PartitionID] { (0..<4).map { PartitionID(space: .boards, index: $0) } }
    /// This test's buckets.
    let buckets = LeaseManager.BucketNames(leases: "leases-" + Self.tag(), nodes: "nodes-" + Self.tag())

    static func tag() -> String { String(UUID().uuidString.prefix(8)) }

    @Test func ofTwoContendersForALeaseExactlyOneWinsAndTheLoserOfACompareAndSetHasLostIt() async throws {
        do {
            let cluster = try await NATSCluster.shared(size: 3)
            let first = try await connectClient(to: cluster, first: 0, name: "node-a")
            let second = try await connectClient(to: cluster, first: 2, name: "node-b")
            let bucketA = try await PartitionLease.makeBucket(in: JetStream(connection: first), name: buckets.leases)
            let bucketB = try await KeyValueBucket.open(buckets.leases, in: JetStream(connection: second))
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
        do {
            let cluster = try await NATSCluster.shared(size: 3)
            let buckets = buckets
            let clientA = try await connectClient(to: cluster, first: 0, name: "node-a")
            let clientB = try await connectClient(to: cluster, first: 1, name: "node-b")
            let a = try await LeaseManager.start(node: "a", map: map, partitions: boards, jetStream: JetStream(connection: clientA),
                                                 configuration: failover, buckets: buckets)
            // What b's hand-backs find while b stops serving: the lease key, still b's, and a2's holdings.
            let probe = try await KeyValueBucket.open(buckets.leases, in: JetStream(connection: clientB))
            let returning = Mutex<LeaseManager?>(nil)
            let preparations = Mutex<[PartitionID: (keyHolder: String?, takenAlready: Bool)]>([:])
            let failover = failover
            let b = try await LeaseManager.start(node: "b", map: map, partitions: boards, jetStream: JetStream(connection: clientB),
                                                 configuration: failover, buckets: buckets, beforeHandingBack: { partition in
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
                                                  configuration: failover, buckets: buckets)
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
    /// every lease write until the bucket elects a leader, many lease times here (L = 1 s, the
    /// shortest allowed; the election takes seconds); the holder's heartbeats still land, so it
    /// keeps serving without a loss, and once there is a leader it renews before the standby,
    /// whose clock stopped while the bucket did not answer it, may take anything over.
    @Test func aHolderKeepsItsPartitionsThroughALeaderElectionOfTheLeasesBucket() async throws {
        let cluster = try await NATSCluster.shared(size: 3)
        let nodes = try await HolderAndStandby.start(on: cluster, map: map, partitions: boards, configuration: Self.shortest,
                                                     buckets: buckets)
        let (a, b) = (nodes.a, nodes.b)
        let jetStream = JetStream(connection: nodes.clientB, timeoutMilliseconds: 250)
        let leaderName = try await leadTheLeasesApart(buckets, jetStream: jetStream)
        let leader = try #require(cluster.nodes.firstIndex { $0.name == leaderName })
        let bucket = try await KeyValueBucket.open(buckets.leases, in: JetStream(connection: nodes.clientB))
        let before = try #require(try await bucket.get("p0")).revision

        let election = try await whileKilled(cluster, leader) {
            let killedAt = ContinuousClock.now
            async let electedAt = firstAnswer(from: jetStream, naming: KeyValueBucket.streamName(ofBucket: buckets.leases),
                                              aLeaderOtherThan: leaderName)
            // The scenario happened: a's renewals went unanswered while there was no leader.
            try await eventually(timeoutSeconds: 10, "a's renewals going unanswered") { await a.leaseBucket.isSilent }
            let election = try await electedAt - killedAt
            print("LeaseIntegrationTests: the leases bucket had no leader for \(election) (L = \(Self.shortest.duration))")
            // Four renewals after the election: the moment a taker's compare-and-set could have
            // beaten the holder's (the bucket answering again) is well past.
            try await eventually(timeoutSeconds: 10, "a renewing again, four times") {
                let entry = try? await bucket.get("p0")
                return (entry?.revision ?? 0) > before + 4 * UInt64(boards.count)
            }
            return election
        }
        #expect(election > Self.shortest.duration * 3, "an election within the old bound proves nothing")
        #expect(nodes.eventsOfA.withLock { $0.filter { if case .lost = $0 { true } else { false } } }.isEmpty,
                "a gave up a partition during the election: \(nodes.eventsOfA.withLock { $0 })")
        #expect(await a.held == Set(boards))
        #expect(await b.held.isEmpty, "b took over a live holder's partitions")
        #expect(nodes.eventsOfB.withLock { $0 }.isEmpty, "b acquired something: \(nodes.eventsOfB.withLock { $0 })")
        #expect(await a.leaseBucket.isSilent == false, "a's renewals still unanswered")
        await nodes.stop()
    }

    /// A holder that dies with the NATS server leading the leases bucket (a machine lost) is not
    /// live to the standby once its heartbeats have been missing for L; its lease is taken over
    /// as soon as the bucket has a leader again, about L after the election at the latest.
    @Test(arguments: LeaseIntegrationTests.deathLeases)
    func aHolderThatDiedDuringAnElectionOfTheLeasesBucketIsReplacedWithinALeaseOfIt(leaseMilliseconds: Int) async throws {
        let cluster = try await NATSCluster.shared(size: 3)
        let configuration = LeaseConfiguration(duration: .milliseconds(leaseMilliseconds), handBacksPerRound: 0)
        let nodes = try await HolderAndStandby.start(on: cluster, map: map, partitions: boards, configuration: configuration,
                                                     buckets: buckets)
        let (a, b) = (nodes.a, nodes.b)
        let jetStream = JetStream(connection: nodes.clientB, timeoutMilliseconds: 250)
        let leaderName = try await leadTheLeasesApart(buckets, jetStream: jetStream)
        let leader = try #require(cluster.nodes.firstIndex { $0.name == leaderName })
        try await eventually(timeoutSeconds: 10, "b seeing a live") { await b.liveNodes.contains("a") }

        let (election, takeover) = try await whileKilled(cluster, leader) {
            await a.halt()
            let killedAt = ContinuousClock.now
            async let electedAt = firstAnswer(from: jetStream, naming: KeyValueBucket.streamName(ofBucket: buckets.leases),
                                              aLeaderOtherThan: leaderName)
            try await eventually(timeoutSeconds: 40, "b holding a's partitions") { await b.held == Set(boards) }
            let heldAt = ContinuousClock.now
            let elected = try await electedAt
            // Polled every 10 ms with a bound of 250 ms: the first answer may come a little after b's.
            return (elected - killedAt, max(.zero, heldAt - elected))
        }
        print("LeaseIntegrationTests: holder dead with the leases bucket's leader: election \(election), "
              + "b holding every partition \(takeover) after it (L = \(configuration.duration))")
        #expect(takeover < configuration.duration + .seconds(2), "taken over more than about L after the election")
        #expect(nodes.eventsOfB.withLock { $0.filter { if case .lost = $0 { true } else { false } } }.isEmpty)
        await nodes.stop()
    }

    /// The shortest lease always; 6 s too with `BANGBANG_LONG_LEASES=1` (for measuring).
    static let deathLeases: [Int] = {
        let shortest = Int(LeaseIntegrationTests.shortest.durationMilliseconds)
        return ProcessInfo.processInfo.environment["BANGBANG_LONG_LEASES"] == "1" ? [shortest, 6_000] : [shortest]
    }()

    /// A node whose watch of the nodes bucket has gone silent (its consumer died with a NATS
    /// server, and the meta leader that would make another died too) reads the heartbeats
    /// instead: a holder that died meanwhile is not kept live by what the watch cannot hear, and
    /// its partitions are taken over after about L, not after the live holder's 20 L.
    @Test func aNodeWhoseWatchOfTheNodesIsSilentReadsTheHeartbeatsAndTakesOverFromADeadHolder() async throws {
        let cluster = try await NATSCluster.shared(size: 3)
        let nodes = try await HolderAndStandby.start(on: cluster, map: map, partitions: boards, buckets: buckets)
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

    /// Steps the leases bucket's leader down until another server than the nodes bucket's leads
    /// it (as the owner keeps them, ClusterNode), and returns its name.
    func leadTheLeasesApart(_ buckets: LeaseManager.BucketNames, jetStream: JetStream) async throws -> String {
        let leases = KeyValueBucket.streamName(ofBucket: buckets.leases)
        let heartbeats = KeyValueBucket.streamName(ofBucket: buckets.nodes)
        var apart: String?
        try await eventually(timeoutSeconds: 30, "\(leases) and \(heartbeats) led by different servers") {
            let leader = try await jetStream.streamInfo(leases).leader
            let other = try await jetStream.streamInfo(heartbeats).leader
            guard let leader, let other else { return false }
            if leader != other {
                apart = leader
                return true
            }
            _ = try? await jetStream.call("STREAM.LEADER.STEPDOWN." + leases)
            try await Task.sleep(for: .milliseconds(500))
            return false
        }
        return try #require(apart)
    }
}

/// When `stream` was first seen led by another server than `leader`, asking every 10 ms.
func firstAnswer(from jetStream: JetStream, naming stream: String, aLeaderOtherThan leader: String) async throws -> ContinuousClock.Instant {
    var seenAt: ContinuousClock.Instant?
    try await eventually(timeoutSeconds: 40, "\(stream) electing another leader than \(leader)") {
        guard let elected = try? await jetStream.streamInfo(stream).leader, elected != leader else { return false }
        seenAt = .now
        return true
    }
    return try #require(seenAt)
}

/// Kills server `index` of `cluster` (kill -9) for `body`, and starts it again after, whatever
/// `body` did, waiting until the cluster places streams on every server again.
func whileKilled<Result>(_ cluster: NATSCluster, _ index: Int, _ body: () async throws -> Result) async throws -> Result {
    cluster.kill(index)
    do {
        let result = try await body()
        try await cluster.restore(index)
        return result
    } catch {
        try? await cluster.restore(index)
        throw error
    }
}

/// Node a holding every partition, then node b started beside it; by default L = 1.5 s, no
/// hand-backs, and a live holder's lease lasting 20 L, so only what a test does moves a lease.
/// Both nodes' lease events are recorded from their start.
final class HolderAndStandby: Sendable {
    static let configuration = LeaseConfiguration(duration: .milliseconds(1_500), handBacksPerRound: 0, liveHolderMultiple: 20)
    let a: LeaseManager
    let b: LeaseManager
    let clientA: NATSConnection
    let clientB: NATSConnection
    let eventsOfA = Mutex<[LeaseEvent]>([])
    let eventsOfB = Mutex<[LeaseEvent]>([])
    private let listening = Mutex<[Task<Void, Never>]>([])

    private init(a: LeaseManager, b: LeaseManager, clientA: NATSConnection, clientB: NATSConnection) {
        (self.a, self.b, self.clientA, self.clientB) = (a, b, clientA, clientB)
    }

    static func start(on cluster: NATSCluster, map: PartitionMap, partitions: [PartitionID],
                      configuration: LeaseConfiguration = HolderAndStandby.configuration,
                      buckets: LeaseManager.BucketNames) async throws -> HolderAndStandby {
        let clientA = try await connectClient(to: cluster, first: 0, name: "node-a")
        let clientB = try await connectClient(to: cluster, first: 1, name: "node-b")
        let a = try await LeaseManager.start(node: "a", map: map, partitions: partitions, jetStream: JetStream(connection: clientA),
                                             configuration: configuration, buckets: buckets)
        try await eventually(timeoutSeconds: 15, "a holding every partition") { await a.held == Set(partitions) }
        let b = try await LeaseManager.start(node: "b", map: map, partitions: partitions, jetStream: JetStream(connection: clientB),
                                             configuration: configuration, buckets: buckets)
        let started = HolderAndStandby(a: a, b: b, clientA: clientA, clientB: clientB)
        started.listening.withLock {
            $0 = [Task { for await event in a.events { started.eventsOfA.withLock { $0.append(event) } } },
                  Task { for await event in b.events { started.eventsOfB.withLock { $0.append(event) } } }]
        }
        return started
    }

    func stop() async {
        await b.stop()
        await a.stop()
        for task in listening.withLock({ $0 }) { task.cancel() }
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
