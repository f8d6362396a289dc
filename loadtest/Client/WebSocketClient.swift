// The driver's WebSocket client: one TCP (or TLS) connection from SocketServer, the opening
// handshake from WebSocketProtocol's ClientHandshake, then frames.
//
// Theory of operation
// -------------------
// A client is confined to the event loop its Connection lives on; every method must be called
// there, and the delegate is called there. States: connecting → handshaking → open →
// closing → closed. The handshake request goes out as soon as TCP (and TLS) is up; the response
// is parsed incrementally, and any frames that arrived with it are processed right away.
//
// Receiving has two paths. Without compression — the common, high-volume case — frames go
// straight through WebSocketProtocol's FrameDecoder: server frames are unmasked, so a message
// that arrives whole in one read is handed to the delegate as a slice of the loop's read buffer
// with no copy and no allocation; a message split over reads or frames is gathered in one
// buffer per client that keeps its capacity. Scenarios that only count messages (echo) skip
// even that. With permessage-deflate the full WebSocketConnection state machine (client role)
// does the inflating, at the cost of one array per message.
//
// Sending masks every frame (RFC 6455 §5.3) with keys from a fast non-cryptographic generator:
// the driver only needs well-formed frames, and a system call per key would make the driver,
// not the server, the bottleneck. `makeFrame` lets a scenario build a masked frame once and
// send the same immutable array many times; Connection keeps the array without copying.
//
// Closing: `close()` sends a close frame and waits (bounded by `closeTimeoutMilliseconds`) for
// the server's close and end of stream. Whatever way the connection ends, the delegate hears
// `client(_:didCloseWith:)` exactly once, with nil for an orderly end we asked for.
import SocketServer
import WebSocketProtocol

protocol WebSocketClientDelegate: AnyObject {
    /// The handshake completed; the client can send.
    func clientDidOpen(_ client: WebSocketClient)
    /// A complete text or binary message. The bytes are valid only during the call.
    func client(_ client: WebSocketClient, didReceive message: UnsafeRawBufferPointer)
    /// The last call. `failure` is nil when we closed and the server agreed; otherwise it says
    /// what went wrong (connect refused, handshake rejected, closed by the server with code …).
    func client(_ client: WebSocketClient, didCloseWith failure: String?)
    /// One read's worth of input has been processed: the moment to send replies batched up
    /// while receiving, in one write instead of one per message.
    func clientDidProcessInput(_ client: WebSocketClient)
}

/// Settings shared by every client of a run.
struct ClientSettings: Sendable {
    var url: TargetURL
    var deflate: DeflateOffer?
    var tls: TLSContext?
    /// Deliver message bytes to the delegate. Off for scenarios that only count messages.
    var collectsPayload = true
    /// Bound on TCP connect plus handshake. Ten seconds matches the server's handshake limit.
    var handshakeTimeoutMilliseconds: Int64 = 10_000
    /// How long `close()` waits for the server to answer. Two seconds, the server's linger time.
    var closeTimeoutMilliseconds: Int64 = 2_000
}

final class WebSocketClient: ConnectionHandler, @unchecked Sendable {
    // Confinement: every property is touched only on `loop.queue` (see the theory of operation).
    enum State {
        case idle
        case connecting
        case handshaking(ClientHandshake)
        case open
        case closing
        case closed
    }

    /// The scenario's number for this client.
    let tag: Int
    let loop: EventLoop
    private let settings: ClientSettings
    weak var delegate: WebSocketClientDelegate?
    private(set) var state: State = .idle
    private var connection: Connection?
    private var random: FastRandom
    private var failure: String?
    /// Close code from the server's close frame, if one came.
    private(set) var closeCode: UInt16?

    // Uncompressed receive path.
    private var decoder: FrameDecoder
    private var frameOpcode: Opcode = .text
    private var frameIsFinal = true
    private var framePayloadLength = 0
    private var isDeliveredInPlace = false
    private var message: [UInt8] = []
    private var control: [UInt8] = []
    // Compressed path.
    private var webSocket: WebSocketConnection?
    private var output = WebSocketOutput()

    /// Monotonic nanoseconds at `start` and when the handshake completed.
    private(set) var startedAt: UInt64 = 0
    private(set) var openedAt: UInt64 = 0

    init(tag: Int, loop: EventLoop, settings: ClientSettings, delegate: WebSocketClientDelegate) {
        self.tag = tag
        self.loop = loop
        self.settings = settings
        self.delegate = delegate
        random = FastRandom(seed: UInt64(tag) &* 0x9E37_79B9 &+ MonotonicClock.nanoseconds())
        decoder = FrameDecoder(role: .client, maxFrameSize: 16 << 20, maxMessageSize: 16 << 20,
                               maxFragmentsPerMessage: 65_536, allowsCompression: false)
    }

    var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    var isCompressed: Bool { webSocket != nil }

    /// Starts connecting from `sourceAddress` (nil: the kernel's choice). Call on the loop.
    /// Errors that happen before a descriptor exists are reported through the delegate too,
    /// on a later turn, so callers handle one path.
    func start(sourceAddress: String?) {
        precondition(loop.isCurrent, "WebSocketClient.start called off its loop")
        guard case .idle = state else { preconditionFailure("a client starts once") }
        state = .connecting
        startedAt = MonotonicClock.nanoseconds()
        do {
            let connection = try SocketClient.connect(host: settings.url.host, port: settings.url.port,
                                                      sourceAddress: sourceAddress, loop: loop, tls: settings.tls,
                                                      handler: self)
            connection.deadline = EventLoop.now + settings.handshakeTimeoutMilliseconds
            self.connection = connection
        } catch {
            state = .closed
            let message = "connect: \(error)"
            loop.execute { self.delegate?.client(self, didCloseWith: message) }
        }
    }

    // MARK: Sending

    /// Sends a text message. Call on the loop.
    @discardableResult
    func send(text payload: UnsafeRawBufferPointer) -> SendResult {
        guard case .open = state, let connection else { return .dropped }
        if let webSocket {
            webSocket.send(textBytes: payload, into: &output)
            return flushOutput(connection)
        }
        var frame: [UInt8] = []
        frame.reserveCapacity(payload.count + FrameEncoder.maxHeaderSize)
        FrameEncoder.appendFrame(opcode: .text, payload: payload, maskingKey: .random(using: &random), to: &frame)
        return sendNow(frame, on: connection)
    }

    /// Requests are timed from the moment they are sent, so they leave at once rather than at
    /// the end of the loop's block.
    private func sendNow(_ frame: [UInt8], on connection: Connection) -> SendResult {
        let result = connection.send(frame)
        connection.flushNow()
        return result
    }

    @discardableResult
    func send(text bytes: [UInt8]) -> SendResult {
        bytes.withUnsafeBytes { send(text: $0) }
    }

    /// A masked text frame to pass to `send(frame:)` any number of times, or nil when
    /// compression is on (compressed frames come from the connection's compressor).
    func makeFrame(text payload: [UInt8]) -> [UInt8]? {
        guard webSocket == nil else { return nil }
        var frame: [UInt8] = []
        payload.withUnsafeBytes {
            FrameEncoder.appendFrame(opcode: .text, payload: $0, maskingKey: .random(using: &random), to: &frame)
        }
        return frame
    }

    /// Sends a frame made by `makeFrame`. Call on the loop.
    @discardableResult
    func send(frame: [UInt8]) -> SendResult {
        guard case .open = state, let connection else { return .dropped }
        return sendNow(frame, on: connection)
    }

    /// Bytes queued in the transport, not yet taken by the kernel.
    var queuedByteCount: Int { connection?.queuedByteCount ?? 0 }

    /// Starts the close handshake, or abandons a connection still being set up. Call on the loop.
    func close() {
        switch state {
        case .idle:
            state = .closed
            loop.execute { self.delegate?.client(self, didCloseWith: nil) }
        case .connecting, .handshaking:
            state = .closing
            connection?.close(flushFirst: false)
        case .open:
            state = .closing
            guard let connection else { return }
            connection.deadline = EventLoop.now + settings.closeTimeoutMilliseconds
            if let webSocket {
                webSocket.close(code: .normalClosure, into: &output)
                _ = flushOutput(connection)
            } else {
                var frame: [UInt8] = []
                let code: [UInt8] = [0x03, 0xE8]  // 1000, normal closure
                code.withUnsafeBytes {
                    FrameEncoder.appendFrame(opcode: .close, payload: $0, maskingKey: .random(using: &random), to: &frame)
                }
                connection.send(frame)
            }
        case .closing, .closed:
            break
        }
    }

    /// Ends the connection at once, without a close handshake (a simulated network drop).
    func abort() {
        switch state {
        case .closed: return
        case .idle: close()
        default:
            state = .closing
            connection?.close(flushFirst: false)
        }
    }

    private func fail(_ message: String) {
        if failure == nil { failure = message }
        state = .closing
        connection?.close(flushFirst: false)
    }

    private func flushOutput(_ connection: Connection) -> SendResult {
        var result = SendResult.enqueued
        if !output.outbound.isEmpty { result = sendNow(output.takeOutbound(), on: connection) }
        if output.shouldCloseTransport { connection.close(flushFirst: true) }
        return result
    }

    // MARK: ConnectionHandler

    func connectionDidOpen(_ connection: Connection) {
        guard case .connecting = state else { return }
        let handshake = ClientHandshake(host: settings.url.hostHeader, path: settings.url.path,
                                        deflate: settings.deflate, using: &random)
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
                    established(result, connection: connection)
                }
            } catch {
                fail("handshake: \(error)")
            }
        case .open, .closing:
            receiveFrames(bytes, connection: connection)
            if isOpen { delegate?.clientDidProcessInput(self) }
        case .idle, .connecting, .closed:
            break
        }
    }

    private func established(_ result: ClientHandshakeResult, connection: Connection) {
        if let deflate = result.deflate {
            webSocket = WebSocketConnection(role: .client, configuration: .echo, deflate: deflate,
                                            maskingKeyGenerator: FastRandom(seed: random.next()))
        }
        state = .open
        connection.deadline = nil
        openedAt = MonotonicClock.nanoseconds()
        delegate?.clientDidOpen(self)
        if !result.unconsumedBytes.isEmpty, isOpen {
            result.unconsumedBytes.withUnsafeBytes { receiveFrames($0, connection: connection) }
            if isOpen { delegate?.clientDidProcessInput(self) }
        }
    }

    private func receiveFrames(_ bytes: UnsafeRawBufferPointer, connection: Connection) {
        if let webSocket {
            webSocket.receive(bytes, into: &output)
            for event in output.events {
                switch event {
                case .text(let payload), .binary(let payload):
                    if isOpen { payload.withUnsafeBytes { delegate?.client(self, didReceive: $0) } }
                case .closed(let code, _, let initiatedByPeer):
                    closeCode = code.rawValue
                    if initiatedByPeer, failure == nil, case .open = state {
                        failure = "closed by the server with code \(code.rawValue)"
                    }
                    state = .closing
                case .ping, .pong:
                    break
                }
            }
            output.events.removeAll(keepingCapacity: true)
            _ = flushOutput(connection)
            return
        }
        var index = 0
        do {
            while !isClosed, let event = try decoder.next(in: bytes, at: &index) {
                switch event {
                case .header(let header):
                    frameOpcode = header.opcode
                    frameIsFinal = header.isFinal
                    framePayloadLength = header.payloadLength
                    if header.opcode.isControl {
                        control.removeAll(keepingCapacity: true)
                    } else if header.opcode != .continuation {
                        message.removeAll(keepingCapacity: true)
                    }
                case .payload(let piece, _):
                    if frameOpcode.isControl {
                        control.append(contentsOf: piece)
                    } else if settings.collectsPayload {
                        if frameIsFinal, frameOpcode != .continuation, piece.count == framePayloadLength {
                            // The whole message sits in the read buffer: hand it out in place.
                            isDeliveredInPlace = true
                            if isOpen { delegate?.client(self, didReceive: piece) }
                        } else {
                            message.append(contentsOf: piece)
                        }
                    }
                case .frameEnd:
                    if frameOpcode.isControl {
                        handleControlFrame(connection)
                    } else if isDeliveredInPlace {
                        isDeliveredInPlace = false
                    } else if frameIsFinal, isOpen {
                        message.withUnsafeBytes { delegate?.client(self, didReceive: $0) }
                    }
                }
            }
        } catch {
            fail("protocol violation by the server: \(error)")
        }
    }

    private func handleControlFrame(_ connection: Connection) {
        switch frameOpcode {
        case .ping:
            guard isOpen else { return }
            var frame: [UInt8] = []
            control.withUnsafeBytes {
                FrameEncoder.appendFrame(opcode: .pong, payload: $0, maskingKey: .random(using: &random), to: &frame)
            }
            connection.send(frame)
        case .close:
            let code = control.count >= 2 ? UInt16(control[0]) << 8 | UInt16(control[1]) : 1005
            closeCode = code
            if isOpen {
                if failure == nil { failure = "closed by the server with code \(code)" }
                var frame: [UInt8] = []
                control.withUnsafeBytes {
                    FrameEncoder.appendFrame(opcode: .close, payload: UnsafeRawBufferPointer(rebasing: $0.prefix(2)),
                                             maskingKey: .random(using: &random), to: &frame)
                }
                connection.send(frame)
            }
            state = .closing
            connection.close(flushFirst: true)
        default:
            break
        }
    }

    func connectionDidDrain(_ connection: Connection) {}

    func connectionDeadlineReached(_ connection: Connection) {
        switch state {
        case .connecting, .handshaking: fail("handshake timed out")
        case .closing: connection.close(flushFirst: false)
        default: break
        }
    }

    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        let wasClosing: Bool
        if case .closing = state { wasClosing = true } else { wasClosing = false }
        state = .closed
        self.connection = nil
        webSocket = nil
        var report = failure
        if report == nil, !wasClosing { report = "connection ended: \(reason)" }
        if report == nil, case .connectFailed(let error) = reason { report = "connect failed: \(error)" }
        delegate?.client(self, didCloseWith: report)
    }
}
