// The Linux transport: SocketServer's client sockets (TLS through OpenSSL for wss://), the
// opening handshake from WebSocketProtocol's ClientHandshake, then the sans-I/O
// WebSocketConnection in the client role.
//
// Theory of operation
// -------------------
// A transport owns one event loop; every channel it opens is confined to that loop's serial
// queue (SocketServer's rule), so a channel's state needs no lock. Calls from other tasks
// (send, ping, close, abort) hop onto the loop with `execute`, which keeps them in call order.
// What arrives goes out through an AsyncStream, which any thread may feed.
//
// A channel moves connecting → handshaking → open → closing → closed. `connect` waits for the
// handshake (bounded by the endpoint's connect timeout, the transport's per-connection deadline)
// and throws whatever stopped it: refused, TLS (an untrusted certificate, a wrong name), an
// HTTP refusal, a timeout. Once open, the WebSocket state machine answers pings and the close
// handshake; `.closed` is reported exactly once, last, with the server's close code when it
// sent one.
#if os(Linux)
import SocketServer
import WebSocketProtocol

/// WebSocket channels over the project's own sockets, TLS and WebSocket implementation.
public final class SocketTransport: WebSocketTransport {
    private let loop: EventLoop

    public init() { loop = EventLoop() }

    public func connect(to endpoint: ServerEndpoint) async throws(TransportError) -> any TransportChannel {
        var tls: TLSContext?
        if endpoint.url.isSecure {
            guard !endpoint.trustedCertificatePaths.isEmpty || endpoint.usesSystemTrustStore else {
                throw TransportError("wss:// needs trusted certificates: a CA file, or the system trust store")
            }
            do {
                tls = try TLSContext(configuration: .client(trusting: endpoint.trustedCertificatePaths,
                                                            includingSystemTrustStore: endpoint.usesSystemTrustStore))
            } catch {
                throw TransportError("\(error)")
            }
        }
        let channel = SocketChannel(loop: loop, endpoint: endpoint)
        let result = await withCheckedContinuation { continuation in
            channel.start(tls: tls, whenOpen: continuation)
        }
        return try result.get()
    }
}

/// One WebSocket over one `Connection`. Confinement: every stored property except `loop`,
/// `endpoint`, `events` and `sink` is touched only on `loop.queue` (see the theory of operation).
final class SocketChannel: ConnectionHandler, TransportChannel, @unchecked Sendable {
    typealias Opening = CheckedContinuation<Result<any TransportChannel, TransportError>, Never>

    private enum State {
        case connecting
        case handshaking(ClientHandshake)
        case open(WebSocketConnection)
        case closing(WebSocketConnection?)
        case closed
    }

    /// How long an orderly close waits for the server's close frame: the server's linger time.
    private static let closeTimeoutMilliseconds: Int64 = 2_000

    let loop: EventLoop
    let endpoint: ServerEndpoint
    let events: AsyncStream<TransportEvent>
    private let sink: AsyncStream<TransportEvent>.Continuation
    private var state = State.connecting
    private var connection: Connection?
    private var opening: Opening?
    private var output = WebSocketOutput()
    private var closeCode: UInt16?
    private var closeReason = ""

    init(loop: EventLoop, endpoint: ServerEndpoint) {
        self.loop = loop
        self.endpoint = endpoint
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    func start(tls: TLSContext?, whenOpen opening: Opening) {
        loop.execute { [self] in
            self.opening = opening
            do {
                let connection = try SocketClient.connect(host: endpoint.url.host, port: endpoint.url.port, loop: loop,
                                                          tls: tls, serverName: endpoint.serverName, handler: self)
                connection.deadline = loop.now + endpoint.connectTimeout.wholeMilliseconds
                self.connection = connection
            } catch {
                state = .closed
                finishOpening(.failure(TransportError("cannot connect to \(endpoint.url.hostHeader): \(error)")))
            }
        }
    }

    private func finishOpening(_ result: Result<any TransportChannel, TransportError>) {
        guard let opening else { return }
        self.opening = nil
        opening.resume(returning: result)
    }

    // MARK: TransportChannel (any thread)

    func send(text: [UInt8]) {
        loop.execute { [self] in
            guard case .open(let socket) = state, let connection else { return }
            _ = text.withUnsafeBytes { socket.send(textBytes: $0, into: &output) }
            flush(socket, connection)
        }
    }

    func ping() {
        loop.execute { [self] in
            guard case .open(let socket) = state, let connection else { return }
            _ = socket.sendPing(into: &output)
            flush(socket, connection)
        }
    }

    func close() {
        loop.execute { [self] in
            switch state {
            case .open(let socket):
                guard let connection else { return }
                state = .closing(socket)
                socket.close(code: .normalClosure, into: &output)
                connection.deadline = loop.now + Self.closeTimeoutMilliseconds
                flush(socket, connection)
            case .connecting, .handshaking:
                state = .closing(nil)
                connection?.close(flushFirst: false)
            case .closing, .closed:
                break
            }
        }
    }

    func abort() {
        loop.execute { [self] in
            if closeReason.isEmpty { closeReason = "dropped" }
            connection?.close(flushFirst: false)
        }
    }

    // MARK: ConnectionHandler (on the loop)

    func connectionDidOpen(_ connection: Connection) {
        guard case .connecting = state else { return }
        var random = SystemRandomNumberGenerator()
        let handshake = ClientHandshake(host: endpoint.url.hostHeader, path: endpoint.url.path,
                                        subprotocols: ["bangbang.v1"], deflate: DeflateOffer(), using: &random)
        state = .handshaking(handshake)
        connection.send(handshake.requestBytes)
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        switch state {
        case .handshaking(var handshake):
            do {
                switch try handshake.receive(bytes) {
                case .needsMoreData:
                    state = .handshaking(handshake)
                case .established(let result):
                    let socket = WebSocketConnection(role: .client, configuration: Self.configuration,
                                                     deflate: result.deflate)
                    state = .open(socket)
                    connection.deadline = nil
                    finishOpening(.success(self))
                    if !result.unconsumedBytes.isEmpty {
                        result.unconsumedBytes.withUnsafeBytes { receive($0, socket, connection) }
                    }
                }
            } catch {
                state = .closing(nil)
                finishOpening(.failure(TransportError("the server refused the WebSocket handshake: \(error)")))
                connection.close(flushFirst: false)
            }
        case .open(let socket):
            receive(bytes, socket, connection)
        case .closing(let socket?):
            receive(bytes, socket, connection)
        case .connecting, .closing(nil), .closed:
            break
        }
    }

    /// Replies to the protocol's small JSON messages, but up to 16 MiB so nothing the server may
    /// legitimately send (a long listing) is refused.
    private static let configuration = WebSocketConfiguration(maxFrameSize: 16 << 20, maxMessageSize: 16 << 20)

    private func receive(_ bytes: UnsafeRawBufferPointer, _ socket: WebSocketConnection, _ connection: Connection) {
        socket.receive(bytes, into: &output)
        for event in output.events {
            switch event {
            case .text(let message):
                sink.yield(.text(message))
            case .pong:
                sink.yield(.pong)
            case .binary, .ping:
                break
            case .closed(let code, let reason, _):
                closeCode = code.rawValue
                closeReason = reason
                state = .closing(socket)
            }
        }
        flush(socket, connection)
    }

    private func flush(_ socket: WebSocketConnection, _ connection: Connection) {
        if !output.outbound.isEmpty { connection.send(output.takeOutbound()) }
        let shouldClose = output.shouldCloseTransport
        output.removeAll()
        if shouldClose { connection.close(flushFirst: true) }
    }

    func connectionDidDrain(_ connection: Connection) {}

    func connectionDeadlineReached(_ connection: Connection) {
        switch state {
        case .connecting, .handshaking:
            state = .closing(nil)
            finishOpening(.failure(TransportError("no WebSocket to \(endpoint.url.hostHeader) within \(endpoint.connectTimeout)")))
            connection.close(flushFirst: false)
        case .closing:
            connection.close(flushFirst: false)
        case .open, .closed:
            break
        }
    }

    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        let wasOpened = opening == nil
        state = .closed
        self.connection = nil
        if !wasOpened {
            finishOpening(.failure(TransportError("cannot reach \(endpoint.url.hostHeader): \(reason)")))
            sink.finish()
            return
        }
        if closeReason.isEmpty { closeReason = "\(reason)" }
        sink.yield(.closed(code: closeCode, reason: closeReason))
        sink.finish()
    }
}
#endif
