// Cluster mode's `/ws`: which endpoint a client gets, and what an owner change does.
//
// One partition, owned by one node at a time (`OwnerDirectory`). On the owner a client gets a
// local `ClientSession`, as on a single node; on any other node a `RelayEndpoint`, which relays
// its messages to the owner (RelayGateway.swift, RelayHost.swift). While nobody owns the
// partition the upgrade is refused with 503 and `Retry-After`. When the owner changes, the
// clients that were served for the old owner are closed with 1012 (service restart): relayed
// ones by the gateway, and this node's local sessions when it stops owning; clients reconnect
// and `auth.resume`.
import BangbangApplication
import BangbangServer
import NATSClient
import PartitionOwner
import SocketServer
import WebSocketProtocol
import WebSocketServer

package final class ClusterRelay: SessionPlacement {
    let directory: OwnerDirectory
    let host: RelayHost
    let gateway: RelayGateway
    private let registries: [LoopRegistry]
    private let metrics: RelayMetrics
    private let logger: Logger

    /// How long a refused client is told to wait: about one lease takeover.
    static let retryAfterSeconds = 2

    init(directory: OwnerDirectory, connection: NATSConnection, registries: [LoopRegistry], timings: RelayTimings = RelayTimings(),
         metrics: RelayMetrics, logger: Logger, makeSession: @escaping @Sendable (LoopRegistry) -> ClientSession) {
        let node = RelayNode(nodeID: directory.localNodeID, incarnation: RelayNode.drawIncarnation())
        self.directory = directory
        self.registries = registries
        self.metrics = metrics
        self.logger = logger
        host = RelayHost(node: node, connection: connection, registries: registries, timings: timings, metrics: metrics,
                         logger: logger, makeSession: makeSession)
        gateway = RelayGateway(node: node, connection: connection, timings: timings, metrics: metrics, logger: logger)
    }

    /// Subscribes the gateway side, starts the host if this node owns the partition, and follows
    /// owner changes from then on.
    package func start() throws(NATSClientError) {
        try gateway.start()
        metrics.markClustered()
        let (host, gateway, local) = (host, gateway, directory.localNodeID)
        directory.onOwnerChange { [self] owner in
            logger.info("partition_owner_changed", ["owner": owner ?? "-", "local": local])
            metrics.isOwner.set(owner == local ? 1 : 0)
            gateway.ownerChanged(to: owner)
            host.setOwning(owner == local)
            if owner != local { closeLocalSessions() }
        }
        let isOwner = directory.currentOwner == local
        metrics.isOwner.set(isOwner ? 1 : 0)
        host.setOwning(isOwner)
    }

    func stop() {
        gateway.stop()
        host.setOwning(false)
        metrics.isOwner.set(0)
    }

    /// The endpoint for a new `/ws` client: nil means a local session (this node owns).
    package func makeEndpoint() -> WebSocketEndpoint? {
        guard let owner = directory.currentOwner, owner != directory.localNodeID else { return nil }
        return gateway.makeEndpoint(owner: owner)
    }

    /// A 503 while nobody owns the partition.
    package func refusal() -> HTTPResponse? {
        guard directory.currentOwner == nil else { return nil }
        var response = HTTPResponse.rejection(status: 503, reason: "no node owns the partition right now (failover); retry shortly")
        response.headers.append(name: "Retry-After", value: String(Self.retryAfterSeconds))
        return response
    }

    /// This node no longer owns: its local sessions answer for a state it no longer serves.
    private func closeLocalSessions() {
        for registry in registries {
            let loop = registry.loop
            loop.execute {
                loop.forEachConnection { connection in
                    guard let client = connection.handler as? ClientConnection, client.webSocketEndpoint is ClientSession else { return }
                    client.close(code: .serviceRestart, reason: "partition owner changed; reconnect")
                }
            }
        }
    }
}
