// Applications serving partitions over a real nats-server as their owners serve them, and a
// node's connection to ask them: the fixture of the tests of what a node does across partitions.
import Cluster
import NATSClient
import NATSTestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

final class ServedOwners: Sendable {
    let nats: NATSCluster
    let owners: [ApplicationHarness]
    let connections: [NATSConnection]
    let served: [OwnerRequests]
    let node: NATSConnection

    /// One owner for each of `partitions` of `map`, on a connection of its own, its application
    /// made by `application` (its index and that connection; by default one on its data directory).
    init(serving partitions: [PartitionID], of map: PartitionMap,
         application: (Int, NATSConnection) async throws -> ApplicationHarness = { _, _ in try ApplicationHarness() }) async throws {
        nats = try await NATSCluster.shared(size: 1)
        var owners: [ApplicationHarness] = []
        var connections: [NATSConnection] = []
        var served: [OwnerRequests] = []
        for (index, partition) in partitions.enumerated() {
            let connection = try await connectClient(to: nats, name: "owner-\(partition)")
            let harness = try await application(index, connection)
            let owner = OwnerRequests(requests: PartitionRequests(connection: connection), app: harness.app, map: map)
            try owner.serve(partition)
            owners.append(harness)
            connections.append(connection)
            served.append(owner)
        }
        self.owners = owners
        self.connections = connections
        self.served = served
        node = try await connectClient(to: nats, name: "session-node")
        for connection in connections { try await connection.flush() }
    }

    func stop() async {
        await node.close()
        for connection in connections { await connection.close() }
        nats.stop()
    }
}
