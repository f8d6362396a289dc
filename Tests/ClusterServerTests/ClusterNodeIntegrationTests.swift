// A cluster node's shared pieces against a real 3-node JetStream cluster: every node gets the
// same session secret, and the owner directory follows the lease of p0 from node to node.
import Cluster
import Foundation
import NATSClient
import NATSTestSupport
import Synchronization
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct ClusterNodeIntegrationTests {
    func configuration(_ cluster: NATSCluster, node: String) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.natsServers = cluster.addresses.map(\.description)
        configuration.nodeID = node
        configuration.leaseMilliseconds = 1_500
        return configuration
    }

    @Test func twoFirstNodesAgreeOnOneSessionSecretAndLaterNodesReadIt() async throws {
        try await withSharedCluster { cluster in
            let nodes = ["a", "b", "c"].map { ClusterNode(configuration: configuration(cluster, node: $0)) }
            for node in nodes { try await node.connect() }
            async let first = nodes[0].sessionSecret()
            async let second = nodes[1].sessionSecret()
            let (one, two) = try await (first, second)
            #expect(one.count == 32 && one == two)
            #expect(try await nodes[2].sessionSecret() == one)
            for node in nodes { await node.leave() }
        }
    }

    /// The first node writes how many pairs the cluster has; a node started with another number
    /// is told so and joins nothing; every pair's inbox exists once they agree.
    @Test func everyNodeOfAClusterHasAsManyPairsAsTheFirst() async throws {
        try await withSharedCluster { cluster in
            func node(_ name: String, pairs: Int) -> ClusterNode {
                var settings = configuration(cluster, node: name)
                settings.partitions = pairs
                return ClusterNode(configuration: settings)
            }
            let (first, same, other) = (node("a", pairs: 4), node("b", pairs: 4), node("c", pairs: 2))
            for each in [first, same, other] { try await each.connect() }
            #expect(try await first.agreeOnPartitions() == nil)
            #expect(try await same.agreeOnPartitions() == nil)
            let refusal = try #require(try await other.agreeOnPartitions())
            #expect(refusal.contains("4 partition pairs") && refusal.contains("--partitions 2"), "\(refusal)")
            for pair in 0..<4 {
                let name = PartitionInbox.streamName(of: PartitionID(space: .accounts, index: pair))
                #expect(try await first.jetStream.streamInfo(name).lastSequence == 0)
            }
            for each in [first, same, other] { await each.leave() }
        }
    }

    /// A cluster whose one partition's journal exists from before the number was kept has one pair.
    @Test func aClusterMadeWithOnePartitionRefusesSeveral() async throws {
        try await withSharedCluster { cluster in
            let old = ClusterNode(configuration: configuration(cluster, node: "a"))
            try await old.connect()
            _ = try await old.partitionJournal()
            var settings = configuration(cluster, node: "b")
            settings.partitions = 3
            let split = ClusterNode(configuration: settings)
            try await split.connect()
            let refusal = try #require(try await split.agreeOnPartitions())
            #expect(refusal.contains("made with one partition"), "\(refusal)")
            #expect(try await old.agreeOnPartitions() == nil, "and goes on with one")
            await split.leave()
            await old.leave()
        }
    }

    @Test func theOwnerDirectoryFollowsTheLeaseAndAStandbyTakesOverAtOnceAfterACleanLeave() async throws {
        try await withSharedCluster { cluster in
            let a = ClusterNode(configuration: configuration(cluster, node: "a"))
            let b = ClusterNode(configuration: configuration(cluster, node: "b"))
            let seenByB = Mutex<[String?]>([])
            b.onOwnerChange { owner in seenByB.withLock { $0.append(owner) } }
            try await a.connect()
            try await b.connect()
            #expect(a.localNodeID == "a" && a.currentOwner == nil)
            var aEvents = try await a.start().makeAsyncIterator()
            guard case .acquired(let partition, _)? = await aEvents.next() else {
                Issue.record("the first node did not take p0")
                return
            }
            #expect(partition == ClusterNode.partition)
            var bEvents = try await b.start().makeAsyncIterator()
            try await eventually("b sees a as the owner") { b.currentOwner == "a" }
            try await eventually("a sees itself as the owner") { a.currentOwner == "a" }

            let left = ContinuousClock.now
            await a.leave()
            guard case .acquired? = await bEvents.next() else {
                Issue.record("the standby did not take p0")
                return
            }
            let takeover = ContinuousClock.now - left
            #expect(takeover < .milliseconds(1_500), "a clean leave is taken over before a lease time (\(takeover))")
            try await eventually("b sees itself as the owner") { b.currentOwner == "b" }
            #expect(seenByB.withLock { $0.first } == "a")
            await b.leave()
        }
    }

    /// A node that took the lease is the owner at once, and an older entry the watch delivers
    /// late (the previous owner's last renewal, after a stall) does not name someone else.
    @Test func aNodeThatTookTheLeaseIsTheOwnerWhateverTheWatchDeliversLate() async throws {
        try await withSharedCluster { cluster in
            let a = ClusterNode(configuration: configuration(cluster, node: "a"))
            try await a.connect()
            let leases = try await PartitionLease.makeBucket(in: a.jetStream, replicas: a.replicas)
            let key = ClusterNode.partition.description
            let staleRevision = try await leases.put(key, LeaseRecord(node: "z", term: 1, durationMilliseconds: 1_500).encoded())
            // The take as the lease manager would report it, at a revision the watch has not seen.
            a.noteAcquired(term: staleRevision + 1_000)
            #expect(a.currentOwner == "a")
            _ = try await a.start()
            // The watch delivers z's entry; with the guard off it would name z.
            try await Task.sleep(for: .seconds(1))
            #expect(a.currentOwner == "a", "an older lease entry displaced the node that took the lease")
            await a.leave()
        }
    }

    /// One NATS server leading both the leases and the heartbeats buckets is the placement whose
    /// loss costs a failover; the node moves the heartbeats bucket's leader elsewhere.
    @Test func theLeasesAndHeartbeatsBucketsEndUpLedByDifferentServers() async throws {
        try await withSharedCluster { cluster in
            let node = ClusterNode(configuration: configuration(cluster, node: "a"))
            try await node.connect()
            _ = try await LeaseManager.makeBuckets(in: node.jetStream, replicas: node.replicas)
            let leasesStream = KeyValueBucket.streamName(ofBucket: PartitionLease.bucketName)
            let heartbeatsStream = KeyValueBucket.streamName(ofBucket: LeaseManager.nodesBucketName)
            func leaders() async throws -> (leases: String?, heartbeats: String?) {
                (try await node.jetStream.streamInfo(leasesStream).leader, try await node.jetStream.streamInfo(heartbeatsStream).leader)
            }
            // Put both on one server: step the heartbeats bucket's leader down until it lands there.
            try await eventually(timeoutSeconds: 60, "one server leading both buckets") {
                let (leases, heartbeats) = try await leaders()
                guard let leases, let heartbeats else { return false }
                if leases == heartbeats { return true }
                try await node.jetStream.stepDownLeader(of: heartbeatsStream)
                try await Task.sleep(for: .milliseconds(500))
                return false
            }
            let shared = try await leaders().leases
            #expect(try await node.separateLeaseAndHeartbeatLeaders() == shared)
            try await eventually(timeoutSeconds: 10, "the heartbeats bucket led by another server") {
                let (leases, heartbeats) = try await leaders()
                return heartbeats != nil && leases == shared && heartbeats != shared
            }
            #expect(try await node.separateLeaseAndHeartbeatLeaders() == nil, "nothing to do once apart")
            await node.leave()
        }
    }
}
