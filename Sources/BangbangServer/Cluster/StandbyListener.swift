// What a cluster node serves while it does not own the partition: `/healthz` answers ok (the
// process is alive), `/readyz` 503 naming the owner (a load balancer sends clients elsewhere),
// and `/ws` is refused with 503 and `Retry-After`, so a client retries, and a load balancer's
// next pick may be the owner. Every other path is 404. It listens on the server's own
// address and is stopped just before the server starts there.
import Forwarding
import SocketServer
import WebSocketProtocol

final class StandbyListener: Sendable {
    private let server: TCPServer
    /// Seconds a refused client is asked to wait: about one lease time, the failover bound.
    let retryAfterSeconds: Int

    init(configuration: ServerConfiguration, directory: any OwnerDirectory, logger: Logger) {
        var socketConfiguration = SocketServerConfiguration(host: configuration.host, port: configuration.port)
        socketConfiguration.eventLoopCount = 1
        socketConfiguration.maxConnections = configuration.maxConnections
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            socketConfiguration.tls = TLSConfiguration(certificatePath: certificate, keyPath: key)
        }
        let trustedProxies = TrustedProxies(configuration.trustedProxies)
        if configuration.expectsProxyProtocol { socketConfiguration.proxyProtocol = trustedProxies }
        let retryAfter = max(1, (configuration.leaseMilliseconds + 999) / 1000)
        retryAfterSeconds = retryAfter
        let router = Self.router(directory: directory, retryAfterSeconds: retryAfter)
        let limits = ConnectionLimits(
            handshakeTimeoutMilliseconds: Int64(configuration.handshakeTimeoutSeconds) * 1000,
            pingIntervalMilliseconds: Int64(configuration.pingIntervalSeconds) * 1000,
            pongTimeoutMilliseconds: Server.pongTimeout(pingIntervalSeconds: configuration.pingIntervalSeconds),
            maxOutputBytes: configuration.maxOutputBytes,
            addressLimiter: AddressLimiter(limit: configuration.maxConnectionsPerAddress,
                                           handshakesPerSecond: configuration.handshakesPerSecondPerAddress),
            forwarding: ForwardingPolicy(trusted: trustedProxies),
            logger: logger)
        let metrics = ServerMetrics()
        server = TCPServer(configuration: socketConfiguration) { connection in
            ClientConnection(connection: connection, router: router, limits: limits, metrics: metrics)
        }
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

    static func router(directory: any OwnerDirectory, retryAfterSeconds: Int) -> HTTPRouter {
        let unavailable: @Sendable () -> HTTPResponse = {
            HTTPResponse(status: 503,
                         headers: ["Content-Type": "text/plain; charset=utf-8", "Retry-After": String(retryAfterSeconds),
                                   "Connection": "close"],
                         body: Array("\(status(of: directory)); retry\n".utf8))
        }
        return HTTPRouter(
            webSocketRoutes: [:],
            handshake: ServerHandshakeConfiguration(subprotocols: ["bangbang.v1"]),
            plainRoutes: [
                "/healthz": { .plain(body: Array("ok\n".utf8)) },
                "/readyz": { .plain(status: 503, body: Array("\(status(of: directory))\n".utf8)) },
                "/ws": unavailable,
            ],
            staticSite: { nil })
    }

    func start() throws -> [SocketAddress] { try server.start() }

    func stop() { server.stop(closeConnections: true, flushFirst: true) }
}
