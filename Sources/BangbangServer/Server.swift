// BangbangServer (`Server`): the application served on sockets. It recovers the application
// from its storage (the data directory's, unless a cluster node hands it a partition's), wires
// the HTTP routes (`/ws`, `/echo`, `/healthz`, `/readyz`, `/metrics`, and the web app for every
// other path) onto the socket server, and owns start-up and shutdown. Where a `/ws` client's
// session runs is decided here for a server on its own (a `ClientSession` on its loop); a
// cluster node hands in a `SessionPlacement` that may put it elsewhere.
import BangbangApplication
import BangbangCore
import CLinux
import Dispatch
import Forwarding
import Foundation
import SocketServer
import WebSocketProtocol
import WebSocketServer
import Synchronization

public final class Server: @unchecked Sendable {
    public let configuration: ServerConfiguration
    package let logger: Logger
    package let metrics = ServerMetrics()
    package let application: Application
    private let group: EventLoopGroup
    /// Who is connected on each loop, and its outbox (indexed by loop).
    package let registries: [LoopRegistry]
    private var socketServer: TCPServer?
    /// The limits a configuration reload (SIGHUP) can change while serving.
    private let addressLimiter: AddressLimiter
    package let userLimiter: KeyedRateLimiter<UserID>
    private let isReady = Mutex(false)
    /// The web app's files; replaced whole by a reload.
    private let staticSite = Mutex<StaticSite?>(nil)
    /// Where `/ws` clients' sessions run when not on this server (a cluster node's relay to the
    /// owner); nil runs every session here.
    package let sessionPlacement = Mutex<(any SessionPlacement)?>(nil)
    /// What stops first at shutdown, before any client is told: a cluster node's answers to other
    /// nodes and its publishing of events (set by the scale-out).
    private let shutdownSteps = Mutex<[@Sendable () -> Void]>([])

    /// Recovers the state in `configuration.dataDirectory` (refusing a directory that another
    /// server holds or that cannot be written). Does not listen yet.
    public convenience init(configuration: ServerConfiguration, logger: Logger,
                            clock: @escaping @Sendable () -> Timestamp = WallClock.now) throws {
        try self.init(configuration: configuration, logger: logger, clock: clock, storage: nil)
    }

    /// `storage`: what the application is recovered from; nil for the data directory's journal
    /// and files (a cluster node hands in its partitions', ScaleOut's ClusterRunner.swift).
    package init(configuration: ServerConfiguration, logger: Logger, clock: @escaping @Sendable () -> Timestamp,
                 exits: ExitRequests = ExitRequests(), storage: ApplicationStorage?) throws {
        self.configuration = configuration
        self.logger = logger
        let sms: SMSProvider = configuration.smsCommand.map { CommandSMSProvider(command: $0, logger: logger) }
            ?? DevelopmentSMSProvider(logger: logger, revealsCodes: configuration.isDevelopment)
        let loopCount = configuration.eventLoops > 0 ? configuration.eventLoops : ProcessInfo.processInfo.activeProcessorCount
        // One malloc arena per loop, not glibc's eight per core: a loop's queue runs on whichever
        // Dispatch worker is free, and each worker would otherwise fill an arena of its own, so
        // the free space left by bursts (thousands of logins at once) was spread over many heaps
        // and kept. Measured with 10,000 idle logged-in runners on one loop: 1.36 KiB of RSS each
        // with the default, 1.02 KiB with one arena.
        mallopt(M_ARENA_MAX, Int32(loopCount))
        group = EventLoopGroup(count: loopCount)
        // One loop means one core's worth of work: the owners then run on the loop's thread too,
        // so a request is served without a single thread switch.
        let ownersTarget = loopCount == 1 ? group.loops[0].queue : nil
        application = try Application(configuration: configuration, logger: logger, metrics: metrics, clock: clock, sms: sms,
                                      ownersTarget: ownersTarget, exits: exits,
                                      storage: storage ?? .dataDirectory(configuration, logger: logger, writerStartQueue: ownersTarget))
        // Recovery read the journal and decoded the snapshot through large temporary structures,
        // now freed: hand that memory back to the system instead of keeping it in the heap.
        malloc_trim(0)
        addressLimiter = AddressLimiter(limit: configuration.maxConnectionsPerAddress,
                                        handshakesPerSecond: configuration.handshakesPerSecondPerAddress)
        userLimiter = KeyedRateLimiter<UserID>(ratePerSecond: configuration.userRequestsPerSecond,
                                               capacity: configuration.userRequestsPerSecond * 2)
        let (metrics, publisher) = (metrics, application.publisher)
        registries = group.loops.map { loop in
            LoopRegistry(loop: loop, metrics: metrics, watcherTotal: publisher.boards.feedWatchers, presence: publisher.accounts.presence)
        }
        application.attach(to: registries)
        let site = try Self.loadStaticSite(configuration, logger: logger)
        staticSite.withLock { $0 = site }
    }

    /// The web folder's files, or nil when not served. An explicit `--web-dir` must load; the
    /// folder found beside the binary may be missing (a server for native apps only).
    static func loadStaticSite(_ configuration: ServerConfiguration, logger: Logger) throws -> StaticSite? {
        guard configuration.servesWeb else { return nil }
        let folder = configuration.webDirectory ?? WebFolder.locate(besideExecutable: WebFolder.currentExecutable)
        guard let folder else {
            logger.warning("web_app_not_found", ["looked_in": WebFolder.candidates(besideExecutable: WebFolder.currentExecutable).joined(separator: ","),
                                                 "hint": "pass --web-dir DIR, or --no-web"])
            return nil
        }
        do {
            let site = try StaticSiteLoader.load(from: folder) { name, reason in
                logger.warning("web_file_skipped", ["file": name, "reason": reason])
            }
            logger.info("web_app_loaded", ["folder": folder, "files": site.files.count])
            return site
        } catch {
            guard configuration.webDirectory == nil else { throw ConfigurationError("--web-dir: \(error)") }
            logger.warning("web_app_not_loaded", ["folder": folder, "error": "\(error)"])
            return nil
        }
    }

    // MARK: Settings derived from the configuration

    /// Room in the socket layer's output limit above `--max-output-bytes`. A slow consumer is
    /// detected at `--max-output-bytes` by the WebSocket layer, which then queues its 1008 close
    /// frame (and whatever was already framed) behind the backlog; the socket layer, which drops a
    /// connection outright at its own limit, must still accept those bytes, or the client would
    /// lose the close code that tells it why. 1 MiB holds a close frame with any backlog of
    /// in-flight frames up to the largest message (`--max-message-bytes` is at most 16 MiB, but
    /// server messages are far smaller).
    static let closingHeadroomBytes = 1024 * 1024

    /// How long a pinged client has to answer before it is closed: half the ping interval (so a
    /// dead peer is noticed within one and a half intervals), but never under 5 s, so a phone
    /// on a slow network with short intervals is not cut off while its pong is on the way.
    package static func pongTimeout(pingIntervalSeconds: Int) -> Int64 {
        max(minimumPongTimeoutMilliseconds, Int64(pingIntervalSeconds) * 1000 / 2)
    }

    static let minimumPongTimeoutMilliseconds: Int64 = 5_000

    /// Frames one `/ws` message may arrive in. Clients send small JSON messages, usually in one
    /// frame; 256 allows any sane fragmentation while bounding the per-frame work a client can
    /// make the server do for one message (each frame costs a header parse and a buffer append).
    package static let maxFragmentsPerMessage = 256

    /// Starts listening; returns the bound addresses (the real port when configured with 0).
    public func start() throws -> [SocketAddress] {
        var socketConfiguration = SocketServerConfiguration(host: configuration.host, port: configuration.port)
        socketConfiguration.eventLoopCount = group.loops.count
        socketConfiguration.maxConnections = configuration.maxConnections
        socketConfiguration.connection.outputLimit = configuration.maxOutputBytes + Self.closingHeadroomBytes
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            socketConfiguration.tls = TLSConfiguration(certificatePath: certificate, keyPath: key)
        }
        let trustedProxies = TrustedProxies(configuration.trustedProxies)
        if configuration.expectsProxyProtocol { socketConfiguration.proxyProtocol = trustedProxies }
        let router = makeRouter()
        let limits = ConnectionLimits(
            handshakeTimeoutMilliseconds: Int64(configuration.handshakeTimeoutSeconds) * 1000,
            pingIntervalMilliseconds: Int64(configuration.pingIntervalSeconds) * 1000,
            pongTimeoutMilliseconds: Self.pongTimeout(pingIntervalSeconds: configuration.pingIntervalSeconds),
            maxOutputBytes: configuration.maxOutputBytes,
            addressLimiter: addressLimiter,
            forwarding: ForwardingPolicy(trusted: trustedProxies),
            logger: logger)
        let context = ClientConnectionContext(router: router, limits: limits, metrics: metrics.connections)
        let server = TCPServer(configuration: socketConfiguration, group: group) { connection in
            ClientConnection(connection: connection, context: context)
        }
        let addresses = try server.start()
        socketServer = server
        isReady.withLock { $0 = true }
        for address in addresses {
            logger.info("listening", ["address": address.description, "port": address.port,
                                      "tls": configuration.tlsCertificatePath != nil, "echo": configuration.enablesEcho,
                                      "proxy_protocol": configuration.expectsProxyProtocol,
                                      "trusted_proxies": trustedProxies.ranges.map(\.description).joined(separator: ",")])
        }
        return addresses
    }

    private func makeRouter() -> HTTPRouter {
        let sessions = registries.map { ClientSession.Shared(app: application, registry: $0, userLimiter: userLimiter) }
        let server = self
        var routes: [String: WebSocketRoute] = [
            "/ws": WebSocketRoute(
                configuration: WebSocketConfiguration(maxFrameSize: configuration.maxMessageBytes,
                                                      maxMessageSize: configuration.maxMessageBytes,
                                                      maxFragmentsPerMessage: Self.maxFragmentsPerMessage),
                // A session is made when its client first speaks. Not in a cluster, where the
                // upgrade decides between a local session and a relay to the owner.
                opensEndpointAtFirstMessage: !configuration.isClustered,
                makeEndpoint: { loop in
                    server.sessionPlacement.withLock { $0 }?.makeEndpoint() ?? ClientSession(shared: sessions[loop.index])
                },
                refusal: { server.sessionPlacement.withLock { $0 }?.refusal() }),
        ]
        if configuration.enablesEcho {
            routes["/echo"] = WebSocketRoute(configuration: .echo, makeEndpoint: { _ in EchoEndpoint() })
        }
        let metrics = metrics
        // Native apps send no Origin; browsers do, and only listed ones may connect.
        var originPolicy: @Sendable (String?) -> Bool = { _ in true }
        if !configuration.allowedOrigins.isEmpty {
            originPolicy = ServerHandshakeConfiguration.allowingOrigins(configuration.allowedOrigins, allowingMissing: true)
        }
        return HTTPRouter(
            webSocketRoutes: routes,
            handshake: ServerHandshakeConfiguration(subprotocols: ["bangbang.v1"], originPolicy: originPolicy),
            plainRoutes: [
                "/healthz": { .plain(body: Array("ok\n".utf8)) },
                "/readyz": {
                    server.isReady.withLock { $0 } ? .plain(body: Array("ready\n".utf8))
                        : .plain(status: 503, body: Array("starting\n".utf8))
                },
                "/metrics": {
                    .plain(contentType: "text/plain; version=0.0.4; charset=utf-8",
                           body: Array((MetricsRenderer.render(metrics, openConnections: server.socketServer?.connectionCount ?? 0,
                                                               rejectedConnections: server.socketServer?.rejectedConnectionCount ?? 0,
                                                               residentBytes: MetricsRenderer.residentBytes())
                                        + HostMetrics.render(isReady: server.isReady.withLock { $0 },
                                                             loggedInUsers: server.application.publisher.accounts.presence.userCount,
                                                             configuration: server.configuration)).utf8))
                },
            ],
            staticSite: { server.staticSite.withLock { $0 } })
    }

    /// Applies what can change while serving (SIGHUP): the request, handshake and per-address
    /// connection limits, and the TLS certificate for new connections. Everything else needs a
    /// restart; the result names what was applied; the web app's files are read again. Throws,
    /// changing nothing, when the new certificate or an explicit `--web-dir` cannot be loaded.
    public func reload(_ new: ServerConfiguration) throws -> [String] {
        let site = try Self.loadStaticSite(new, logger: logger)
        if let certificate = new.tlsCertificatePath, let key = new.tlsKeyPath {
            guard let socketServer, configuration.tlsCertificatePath != nil else {
                throw ConfigurationError("TLS cannot be switched on by a reload; restart the server")
            }
            do { try socketServer.reloadTLS(TLSConfiguration(certificatePath: certificate, keyPath: key)) } catch {
                throw ConfigurationError("TLS certificate or key unusable, kept the old one: \(error)")
            }
        }
        addressLimiter.update(limit: new.maxConnectionsPerAddress, handshakesPerSecond: new.handshakesPerSecondPerAddress)
        userLimiter.update(ratePerSecond: new.userRequestsPerSecond, capacity: new.userRequestsPerSecond * 2)
        application.connectionRequestRate.withLock { $0 = new.requestsPerSecond }
        var applied = ["max-connections-per-address", "handshakes-per-second-per-address",
                       "user-requests-per-second", "requests-per-second (new connections)"]
        if new.tlsCertificatePath != nil { applied.append("tls-cert/tls-key (new connections)") }
        staticSite.withLock { $0 = site }
        applied.append("web app files")
        return applied
    }

    /// Where the server says the process must end; the executable exits as asked.
    public var exitRequests: ExitRequests { application.exits }

    /// Runs `step` first at shutdown, before clients are told (any thread).
    package func onShutdown(_ step: @escaping @Sendable () -> Void) {
        shutdownSteps.withLock { $0.append(step) }
    }

    /// Stops accepting, tells every WebSocket client the server is going away (1001; a node handing
    /// its partition over says 1012, come back), lets queued output drain, writes a final snapshot (so the next start has no journal to
    /// replay), then flushes and closes the journal. Blocks up to `timeout` for the clients, plus
    /// the snapshot's time.
    public func shutdown(timeout: Duration = .seconds(5), closing code: CloseCode = .goingAway,
                         reason: String = "server shutting down") {
        isReady.withLock { $0 = false }
        for step in shutdownSteps.withLock({ $0 }) { step() }
        socketServer?.stop(closeConnections: false)
        let done = DispatchGroup()
        for registry in registries {
            done.enter()
            registry.loop.execute {
                registry.loop.forEachConnection { connection in
                    // An open connection's handler is its client (before it opens, or once it
                    // closes, there is no WebSocket to tell).
                    if connection.isOpen, let client = connection.handler as? ClientConnection {
                        client.close(code: code, reason: reason)
                    } else {
                        connection.close(flushFirst: true)
                    }
                }
                done.leave()
            }
        }
        _ = done.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds * 1000)))
        Thread.sleep(forTimeInterval: 0.2)
        socketServer?.stop(closeConnections: true, flushFirst: true)
        application.writeFinalSnapshot()
        do { try application.closeJournals() } catch {
            logger.error("journal_close_failed", ["error": "\(error)"])
        }
        logger.info("stopped", [:])
    }
}

extension Server {
    /// What `bangbang check-config` checks beyond syntax: the TLS files load, administrator
    /// phones parse. (The data directory is checked by starting: it must also be lockable.)
    public static func check(_ configuration: ServerConfiguration) throws {
        for phone in configuration.adminPhones {
            do { _ = try PhoneNumber(parsing: phone) } catch {
                throw ConfigurationError("invalid --admin-phone '\(phone)': \(error.message)")
            }
        }
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            do { _ = try TLSContext(configuration: TLSConfiguration(certificatePath: certificate, keyPath: key)) } catch {
                throw ConfigurationError("TLS certificate or key unusable: \(error)")
            }
        }
    }
}

/// Where a `/ws` client's session runs when it is not a `ClientSession` on this server: on a
/// cluster node that does not own the partition, a relay to the owner (ScaleOut's ClusterRelay).
package protocol SessionPlacement: Sendable {
    /// The endpoint for a new client, or nil to run its session here.
    func makeEndpoint() -> WebSocketEndpoint?
    /// The answer to an upgrade that cannot be served now (no owner known), or nil to serve it.
    func refusal() -> HTTPResponse?
}
