// TCPServer: listeners plus a group of event loops. Bytes only: it knows nothing about
// WebSocket or the application.
//
// Accepting runs on its own serial queue, one DispatchSourceRead per listening socket. Each
// readiness event accepts up to `acceptBatchSize` connections, assigns each to the next loop
// (round robin) and hands each loop its share of the batch in one block, where the loop sets
// them up: a burst of thousands of clients costs a block per loop per batch, not one each.
// When the process or system is out of descriptors (EMFILE/ENFILE) the accept source is
// suspended for `acceptBackoffMilliseconds` instead of spinning on a readiness that cannot be
// served; existing connections are untouched.
import Dispatch
import Glibc
import Platform
import Synchronization

/// A TCP/TLS server whose connections are served by `ConnectionHandler`s.
///
/// Confinement: `@unchecked Sendable`; listener state is confined to `acceptQueue`, the
/// connection count is guarded by a mutex, and `start`/`stop` may be called from any thread.
public final class TCPServer: @unchecked Sendable {
    public typealias HandlerFactory = @Sendable (Connection) -> ConnectionHandler

    public let configuration: SocketServerConfiguration
    /// The loops connections are spread over.
    public let group: EventLoopGroup
    private let makeHandler: HandlerFactory
    private let acceptQueue = DispatchQueue(label: "bangbang.accept")
    private var listeners: [Listener] = []
    /// Connections open now, and refused for the connection limit since start.
    private let counts = ConnectionCounts()
    /// Shared by every accepted connection: the options and the release that updates `counts`.
    private let connectionContext: ConnectionContext
    /// Read on the accept queue for every connection, replaced by `reloadTLS`.
    private let tlsContext = Mutex<TLSContext?>(nil)

    /// Creates a server; `makeHandler` is called on the new connection's loop for every accepted
    /// connection.
    public init(configuration: SocketServerConfiguration, group: EventLoopGroup? = nil,
                makeHandler: @escaping HandlerFactory) {
        precondition(configuration.maxConnections > 0 && configuration.acceptBatchSize > 0,
                     "maxConnections and acceptBatchSize must be positive")
        self.configuration = configuration
        self.group = group ?? EventLoopGroup(count: max(1, configuration.eventLoopCount),
                                             readBufferSize: configuration.readBufferSize,
                                             tickMilliseconds: configuration.tickMilliseconds,
                                             syscalls: configuration.syscalls)
        self.makeHandler = makeHandler
        let counts = counts
        connectionContext = ConnectionContext(options: configuration.connection,
                                              onRelease: { counts.state.withLock { $0.open -= 1 } })
    }

    /// Loads a new certificate and key (a renewed certificate) for connections accepted from now
    /// on; connections already open keep the session they negotiated. On failure nothing
    /// changes. Any thread.
    public func reloadTLS(_ configuration: TLSConfiguration) throws(SocketError) {
        precondition(configuration.isServer, "a server needs a server TLS configuration")
        let context = try TLSContext(configuration: configuration)
        tlsContext.withLock { $0 = context }
    }

    /// Binds, listens and starts accepting; returns the bound addresses (with the real port
    /// when `port` was 0). Call once.
    @discardableResult
    public func start() throws(SocketError) -> [SocketAddress] {
        if let tls = configuration.tls {
            precondition(tls.isServer, "a server needs a server TLS configuration")
            let context = try TLSContext(configuration: tls)
            tlsContext.withLock { $0 = context }
        }
        var addresses = try SocketAddress.resolve(host: configuration.host, port: configuration.port)
        var bound: [SocketAddress] = []
        var opened: [Listener] = []
        do throws(SocketError) {
            for index in addresses.indices {
                var address = addresses[index]
                // `localhost` resolves to both families; with port 0 the second must reuse the
                // first one's port so clients find the server on either.
                if configuration.port == 0, let first = bound.first {
                    address = address.withPort(first.port)
                    addresses[index] = address
                }
                let listener = try Listener(address: address, backlog: configuration.backlog,
                                            isIPv6Only: addresses.count > 1, syscalls: configuration.syscalls)
                opened.append(listener)
                bound.append(listener.address)
            }
        } catch {
            for listener in opened { configuration.syscalls.close(listener.descriptor) }
            throw error
        }
        acceptQueue.sync {
            listeners = opened
            for listener in opened { startAccepting(listener) }
        }
        return bound
    }

    /// Stops accepting. With `closeConnections`, every open connection is closed (flushing
    /// queued output first when `flushFirst`). Safe from any thread.
    public func stop(closeConnections: Bool = true, flushFirst: Bool = true) {
        acceptQueue.sync {
            for listener in listeners { listener.cancel() }
            listeners = []
        }
        guard closeConnections else { return }
        for loop in group.loops {
            loop.execute {
                loop.forEachConnection { $0.close(flushFirst: flushFirst) }
            }
        }
    }

    /// Open connections across all loops (including ones still in TLS handshake or closing).
    /// Safe from any thread.
    public var connectionCount: Int { counts.state.withLock { $0.open } }

    /// Connections refused because `maxConnections` was reached. Safe from any thread.
    public var rejectedConnectionCount: Int { counts.state.withLock { $0.rejected } }

    private func startAccepting(_ listener: Listener) {
        let source = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: acceptQueue)
        source.setEventHandler { [unowned listener] in self.acceptBatch(listener) }
        let syscalls = configuration.syscalls
        source.setCancelHandler { syscalls.close(listener.descriptor) }
        listener.source = source
        source.activate()
    }

    private func acceptBatch(_ listener: Listener) {
        // Each loop's share of the batch, by the loop's position in the group.
        var assigned: [[(Int32, SocketAddress)]] = Array(repeating: [], count: group.loops.count)
        defer {
            for (position, peers) in assigned.enumerated() where !peers.isEmpty {
                hand(peers, to: group.loops[position])
            }
        }
        for _ in 0..<configuration.acceptBatchSize {
            let accepted: (Int32, SocketAddress)?
            do {
                accepted = try configuration.syscalls.acceptConnection(on: listener.descriptor)
            } catch {
                if error.isResourceExhaustion {
                    listener.backOff(milliseconds: configuration.acceptBackoffMilliseconds, queue: acceptQueue)
                    return
                }
                // ECONNABORTED and friends concern one peer only; keep accepting.
                continue
            }
            guard let (descriptor, address) = accepted else { return }
            guard admit(descriptor) else { continue }
            assigned[group.next().index].append((descriptor, address))
        }
    }

    /// Counts an accepted connection against `maxConnections`; closes it when over.
    private func admit(_ descriptor: Int32) -> Bool {
        let maximum = configuration.maxConnections
        let admitted = counts.state.withLock { counts -> Bool in
            if counts.open >= maximum {
                counts.rejected += 1
                return false
            }
            counts.open += 1
            return true
        }
        guard admitted else {
            configuration.syscalls.close(descriptor)
            return false
        }
        // Small frames (WebSocket pushes) must leave at once rather than wait for Nagle.
        try? configuration.syscalls.setOption(descriptor, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
        return true
    }

    /// Sets up admitted connections on `loop`, in the order they were accepted.
    private func hand(_ peers: [(Int32, SocketAddress)], to loop: EventLoop) {
        let context = connectionContext
        let tlsContext = tlsContext.withLock { $0 }
        loop.execute {
            for (descriptor, address) in peers {
                var session: TLSSession?
                if let tlsContext {
                    session = try? TLSSession(context: tlsContext, serverName: nil)
                    if session == nil {
                        loop.syscalls.close(descriptor)
                        context.onRelease?()
                        continue
                    }
                }
                let connection = Connection(descriptor: descriptor, remoteAddress: address, loop: loop,
                                            context: context, tls: session, handler: nil, state: .connecting)
                connection.handler = self.makeHandler(connection)
                connection.start(proxyProtocol: self.configuration.proxyProtocol)
            }
        }
    }

}

/// A server's connection counts, shared with its connections' context, which holds this rather
/// than the server (the server holds the context).
final class ConnectionCounts: Sendable {
    let state = Mutex<(open: Int, rejected: Int)>((0, 0))
}

/// One listening socket.
///
/// Confinement: `@unchecked Sendable` because its source's handlers capture it; all mutable
/// state is touched only on the server's accept queue.
final class Listener: @unchecked Sendable {
    let descriptor: Int32
    let address: SocketAddress
    var source: DispatchSourceRead?
    private var isSuspended = false
    private var isCancelled = false

    /// `isIPv6Only` is set when the host resolved to several addresses (`localhost`), so the
    /// IPv4 and IPv6 sockets do not collide; a lone `::` stays dual-stack and also serves IPv4
    /// clients (seen as `::ffff:a.b.c.d`).
    init(address: SocketAddress, backlog: Int32, isIPv6Only: Bool, syscalls: Syscalls) throws(SocketError) {
        let descriptor: Int32
        do {
            descriptor = try syscalls.socket(family: address.family)
        } catch {
            throw .system(call: "socket", error)
        }
        do {
            try syscalls.setOption(descriptor, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            if address.family == AF_INET6 {
                try syscalls.setOption(descriptor, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY,
                                       value: isIPv6Only ? 1 : 0)
            }
            try syscalls.bind(descriptor, to: address)
            try syscalls.listen(descriptor, backlog: backlog)
            self.address = try syscalls.localAddress(of: descriptor)
        } catch {
            syscalls.close(descriptor)
            throw .system(call: "listen on \(address)", error)
        }
        self.descriptor = descriptor
    }

    func backOff(milliseconds: Int, queue: DispatchQueue) {
        guard !isSuspended, !isCancelled, let source else { return }
        isSuspended = true
        source.suspend()
        queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
            guard self.isSuspended, !self.isCancelled else { return }
            self.isSuspended = false
            self.source?.resume()
        }
    }

    func cancel() {
        guard !isCancelled, let source else { return }
        isCancelled = true
        source.cancel()
        if isSuspended {
            isSuspended = false
            source.resume()
        }
    }
}

extension SocketAddress {
    func withPort(_ port: Int) -> SocketAddress {
        switch self {
        case .v4(var address):
            address.sin_port = UInt16(port).bigEndian
            return .v4(address)
        case .v6(var address):
            address.sin6_port = UInt16(port).bigEndian
            return .v6(address)
        }
    }
}
