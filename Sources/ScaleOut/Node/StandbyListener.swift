// What a cluster node serves while it does not own the partition: `/healthz` answers ok (the
// process is alive), `/readyz` 503 naming the owner (a load balancer sends clients elsewhere),
// and `/ws` relayed to the owner (RelayGateway.swift) once the node is on NATS and an owner is
// known, or with `--cluster-sessions node` each client's session run here (NodeSession.swift;
// `/readyz` then answers ok while an owner is known); until then, and while this node itself is
// recovering, `/ws` is refused with 503 and `Retry-After`, so a client retries. `/metrics` shows its connections and its side of the relay
// (relayed connections, envelopes, refusals). Every other path is 404. It listens on the server's own
// address and is stopped just before the server starts there.
import BangbangApplication
import BangbangServer
import Cluster
import Forwarding
import Foundation
import NATSClient
import PartitionOwner
import SocketServer
import Synchronization
import WebSocketProtocol
import WebSocketServer

package final class StandbyListener: Sendable {
    private let server: TCPServer
    private let directory: any OwnerDirectory
    private let logger: Logger
    /// Set once the node is on NATS (`startRelaying`).
    private let gateway = StandbySlot<RelayGateway>()
    /// Set once the node is on NATS, when it runs its clients' sessions itself.
    private let sessions = StandbySlot<NodeSessionHub>()
    /// What the node adds to `/metrics` (with several pairs: which it owns).
    let extraMetrics = StandbySlot<@Sendable () -> String>()
    private let configuration: ServerConfiguration
    /// Its connections and, once relaying, the gateway's counts.
    private let metrics = ServerMetrics()
    /// Seconds a refused client is asked to wait: about one lease time, the failover bound.
    let retryAfterSeconds: Int

    /// How the deployment is partitioned: what its clients' sessions route by.
    private let map: PartitionMap

    /// `map`: the configuration's partitions unless given.
    init(configuration: ServerConfiguration, directory: any OwnerDirectory, logger: Logger, map: PartitionMap? = nil) {
        self.map = map ?? PartitionMap(partitionCount: configuration.partitions)
        var socketConfiguration = SocketServerConfiguration(host: configuration.host, port: configuration.port)
        // A standby relaying its clients needs one loop; one running their sessions, a server's.
        socketConfiguration.eventLoopCount = !configuration.runsSessionsOnEveryNode ? 1
            : configuration.eventLoops > 0 ? configuration.eventLoops : ProcessInfo.processInfo.activeProcessorCount
        socketConfiguration.maxConnections = configuration.maxConnections
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            socketConfiguration.tls = TLSConfiguration(certificatePath: certificate, keyPath: key)
        }
        let trustedProxies = TrustedProxies(configuration.trustedProxies)
        if configuration.expectsProxyProtocol { socketConfiguration.proxyProtocol = trustedProxies }
        let retryAfter = max(1, (configuration.leaseMilliseconds + 999) / 1000)
        retryAfterSeconds = retryAfter
        self.directory = directory
        self.logger = logger
        self.configuration = configuration
        let (gateway, metrics, sessions, extraMetrics) = (gateway, metrics, sessions, extraMetrics)
        metrics.relay.markClustered()
        let listening = Mutex<TCPServer?>(nil)
        let webSocket = WebSocketConfiguration(maxFrameSize: configuration.maxMessageBytes, maxMessageSize: configuration.maxMessageBytes,
                                               maxFragmentsPerMessage: Server.maxFragmentsPerMessage)
        let router = Self.router(directory: directory, retryAfterSeconds: retryAfter, webSocket: webSocket,
                                 gateway: { gateway.current }, sessions: { sessions.current },
                                 servesWithoutOwner: configuration.isPartitioned,
                                 metrics: {
                                     let server = listening.withLock { $0 }
                                     return MetricsRenderer.render(metrics, openConnections: server?.connectionCount ?? 0,
                                                                   rejectedConnections: server?.rejectedConnectionCount ?? 0,
                                                                   residentBytes: MetricsRenderer.residentBytes())
                                         + (extraMetrics.current?() ?? "")
                                 })
        let limits = ConnectionLimits(
            handshakeTimeoutMilliseconds: Int64(configuration.handshakeTimeoutSeconds) * 1000,
            pingIntervalMilliseconds: Int64(configuration.pingIntervalSeconds) * 1000,
            pongTimeoutMilliseconds: Server.pongTimeout(pingIntervalSeconds: configuration.pingIntervalSeconds),
            maxOutputBytes: configuration.maxOutputBytes,
            addressLimiter: AddressLimiter(limit: configuration.maxConnectionsPerAddress,
                                           handshakesPerSecond: configuration.handshakesPerSecondPerAddress),
            forwarding: ForwardingPolicy(trusted: trustedProxies),
            logger: logger)
        let context = ClientConnectionContext(router: router, limits: limits, metrics: metrics.connections)
        server = TCPServer(configuration: socketConfiguration) { connection in
            ClientConnection(connection: connection, context: context)
        }
        listening.withLock { $0 = server }
    }

    /// What a standby says about itself: who owns the partition, as far as it knows (itself,
    /// between taking the lease and serving: it is recovering).
    static func status(of directory: any OwnerDirectory) -> String {
        switch directory.currentOwner {
        case nil: "standby; no owner yet (failover in progress)"
        case directory.localNodeID?: "recovering; this node owns the partition and is replaying its journal"
        case let owner?: "standby; owner is \(owner)"
        }
    }

    /// `servesWithoutOwner`: the pairs are spread over the nodes (`--partitions` above 1), so the
    /// sessions are served once the node is on NATS, whoever owns `p0`.
    static func router(directory: any OwnerDirectory, retryAfterSeconds: Int, webSocket: WebSocketConfiguration,
                       gateway: @escaping @Sendable () -> RelayGateway?,
                       sessions: @escaping @Sendable () -> NodeSessionHub? = { nil },
                       servesWithoutOwner: Bool = false,
                       metrics: @escaping @Sendable () -> String) -> HTTPRouter {
        let unavailable: @Sendable () -> HTTPResponse = {
            HTTPResponse(status: 503,
                         headers: ["Content-Type": "text/plain; charset=utf-8", "Retry-After": String(retryAfterSeconds),
                                   "Connection": "close"],
                         body: Array("\(status(of: directory)); retry\n".utf8))
        }
        /// The owner to relay to: another node, known, while this node is on NATS.
        let relayOwner: @Sendable () -> (RelayGateway, String)? = {
            guard let gateway = gateway(), let owner = directory.currentOwner, owner != directory.localNodeID else { return nil }
            return (gateway, owner)
        }
        let serving: @Sendable () -> Bool = { servesWithoutOwner ? sessions() != nil : relayOwner() != nil }
        let relay = WebSocketRoute(
            configuration: webSocket,
            makeEndpoint: { loop in
                if servesWithoutOwner { return sessions().map { $0.makeSession(on: loop) } ?? RefusingEndpoint() }
                guard let (gateway, owner) = relayOwner() else { return RefusingEndpoint() }
                if let sessions = sessions() { return sessions.makeSession(on: loop) }
                return gateway.makeEndpoint(owner: owner)
            },
            refusal: { serving() ? nil : unavailable() })
        let ready: @Sendable () -> HTTPResponse = {
            guard sessions() != nil, serving() else {
                return .plain(status: 503, body: Array("\(status(of: directory))\n".utf8))
            }
            return .plain(body: Array("serving sessions; \(servesWithoutOwner ? "partition pairs spread over the nodes" : status(of: directory))\n".utf8))
        }
        return HTTPRouter(
            webSocketRoutes: ["/ws": relay],
            handshake: ServerHandshakeConfiguration(subprotocols: ["bangbang.v1"]),
            plainRoutes: [
                "/healthz": { .plain(body: Array("ok\n".utf8)) },
                "/readyz": ready,
                "/metrics": { .plain(contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(metrics().utf8)) },
            ],
            staticSite: { nil })
    }

    package func start() throws -> [SocketAddress] { try server.start() }

    /// Relays `/ws` to the owner from now on, through the node's NATS connection, or runs the
    /// clients' sessions here (`--cluster-sessions node`; always with several pairs, where
    /// there is no one owner to relay to).
    /// `history`: the node's archive and its following of the history stream, which the
    /// sessions read a user's closed orders from when several pairs hold the boards.
    /// `local`: the partitions this node owns (with several pairs), which its sessions call in the process.
    func startRelaying(through connection: NATSConnection, history: HistoryFollower? = nil, local: LocalOwners? = nil,
                       timings: RelayTimings = RelayTimings()) throws(NATSClientError) {
        if configuration.runsSessionsOnEveryNode {
            let hub = NodeSessionHub(connection: connection, nodeID: directory.localNodeID, map: map, configuration: configuration,
                                     metrics: metrics, logger: logger, history: history, local: local)
            try hub.start()
            sessions.current = hub
        }
        guard !configuration.isPartitioned else { return }
        let relay = RelayGateway(node: RelayNode(nodeID: directory.localNodeID, incarnation: RelayNode.drawIncarnation()),
                                 connection: connection, timings: timings, metrics: metrics.relay, logger: logger)
        try relay.start()
        directory.onOwnerChange { owner in relay.ownerChanged(to: owner) }
        gateway.current = relay
    }

    func stop() {
        gateway.current?.stop()
        sessions.current?.stop()
        server.stop(closeConnections: true, flushFirst: true)
    }
}

/// What the standby has once it is on NATS (its relay, its sessions' hub), read from any thread.
package final class StandbySlot<Value: Sendable>: Sendable {
    private let slot = Mutex<Value?>(nil)

    var current: Value? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// What `/ws` gets when the owner changed between the refusal check and the upgrade: a close
/// with 1013 (try again later) at once.
package final class RefusingEndpoint: WebSocketEndpoint {
    package func webSocketDidOpen(_ channel: WebSocketChannel) {
        channel.close(code: .tryAgainLater, reason: "no partition owner to relay to; retry")
    }

    package func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {}
    package func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) {}
    package func webSocketDidClose(_ channel: WebSocketChannel) {}
}
