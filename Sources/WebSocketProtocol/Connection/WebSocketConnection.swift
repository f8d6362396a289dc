// WebSocket connection state machine (RFC 6455 §5–§7, RFC 7692 §6), sans-I/O.
//
// Theory of operation.
//
// A connection starts after a successful upgrade handshake and is driven by three kinds of
// input: bytes from the transport (`receive`), the end of those bytes (`receiveEndOfInput`)
// and commands from the application (`send`, `sendPing`, `close`). Every call appends what
// it produced to a caller-owned `WebSocketOutput`: events for the application, bytes for the
// transport and a flag asking the transport to close. Nothing here touches a socket, a clock
// or a queue; the I/O shell performs the output. The object is not thread-safe: the shell
// confines each connection to one serial queue and makes every call from it.
//
// States:
//
//     open ──close()──────────────▶ closeSent ──peer's close / EOF──▶ closed
//       │                                                              ▲
//       ├──peer's close: echo it, shouldCloseTransport ────────────────┤
//       ├──protocol violation: send close(1002/1007/1009) ─────────────┤
//       └──EOF (1006) ─────────────────────────────────────────────────┘
//
// Incoming bytes go through `FrameDecoder`, which enforces every header rule and size limit
// before payload is buffered. Frames are processed strictly in order: if a valid message and
// then a bad frame arrive in the same read, the message event and any pong come out first,
// then our close frame; a shell that answers messages (an echo) feeds input with
// `receiveUntilMessage`, one message per call, so its answer is written ahead of that close
// frame too. The first violation is final: we send a close with the code from
// `ProtocolViolation.closeCode` (the one place errors become codes), report `.closed`, ask
// for the transport to close and read nothing more.
//
// Data payload is copied once, from the transport's buffer into the message buffer, and
// unmasked there in place. Text is UTF-8-validated piece by piece as it is unmasked (or
// inflated), so invalid text fails on the frame that carries the bad byte. Compressed
// messages are inflated as their frames arrive, under the message size limit. The finished
// buffer is handed to the event without a copy and the next message starts a new one, so the
// echo path allocates nothing per frame beyond the message buffer itself. Control frames
// interleaved with a fragmented message land in a separate small buffer.
//
// Close handshake (RFC 6455 §7.1): when the peer closes first we echo its code (an empty close
// if it sent none), report `.closed(initiatedByPeer: true)` and ask for the transport to close
// (a server closes TCP first, §7.1.1). When we close first we stop sending, ignore data
// frames and pings until the peer's close arrives, then report `.closed(initiatedByPeer:
// false)`. A peer that never answers is the shell's problem: it owns the clock, so it applies
// the close timeout and then calls `receiveEndOfInput`.

/// One established WebSocket connection, either end. See the theory of operation above.
public final class WebSocketConnection {
    enum State {
        case open
        case closeSent(code: CloseCode, reason: String)
        case closed
    }

    /// The data message being received.
    struct IncomingMessage {
        var isText: Bool
        var isCompressed: Bool
    }

    public let role: Role
    public let configuration: WebSocketConfiguration
    /// The permessage-deflate parameters agreed in the handshake, or nil.
    public let deflate: DeflateParameters?

    private var state: State = .open
    private var decoder: FrameDecoder
    private var maskingKeyGenerator: any RandomNumberGenerator
    private let inflater: MessageInflater?
    private let deflater: MessageDeflater?

    private var currentFrame: FrameHeader?
    private var incoming: IncomingMessage?
    private var messageBuffer: [UInt8] = []
    private var controlBuffer: [UInt8] = []
    /// Unmasked compressed bytes on their way into the inflater (server role only).
    private var inflateInput: [UInt8] = []
    /// Compressed outgoing payload, reused across sends.
    private var deflateOutput: [UInt8] = []
    private var utf8 = UTF8Validator()

    /// Why we failed the connection, if we did; for logs.
    public private(set) var violation: ProtocolViolation?

    /// - Parameters:
    ///   - role: which end we are; decides masking in both directions.
    ///   - configuration: limits and ping behaviour.
    ///   - deflate: the negotiated permessage-deflate parameters, nil if not negotiated.
    ///   - maskingKeyGenerator: source of client masking keys (unused by servers). A parameter so
    ///     tests are deterministic; the default is the system's secure generator.
    public init(role: Role, configuration: WebSocketConfiguration = WebSocketConfiguration(),
                deflate: DeflateParameters? = nil,
                maskingKeyGenerator: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.role = role
        self.configuration = configuration
        self.deflate = deflate
        self.maskingKeyGenerator = maskingKeyGenerator
        decoder = FrameDecoder(role: role, maxFrameSize: configuration.maxFrameSize,
                               maxMessageSize: configuration.maxMessageSize,
                               maxFragmentsPerMessage: configuration.maxFragmentsPerMessage,
                               allowsCompression: deflate != nil)
        if let deflate {
            switch role {
            case .server:
                inflater = MessageInflater(windowBits: deflate.clientMaxWindowBits,
                                           keepsContext: !deflate.clientNoContextTakeover)
                // Never keep context on the server: see MessageDeflater's theory of operation.
                deflater = MessageDeflater(windowBits: deflate.serverMaxWindowBits, keepsContext: false)
            case .client:
                inflater = MessageInflater(windowBits: deflate.serverMaxWindowBits,
                                           keepsContext: !deflate.serverNoContextTakeover)
                deflater = MessageDeflater(windowBits: deflate.clientMaxWindowBits,
                                           keepsContext: !deflate.clientNoContextTakeover)
            }
        } else {
            inflater = nil
            deflater = nil
        }
    }

    /// Whether messages may still be sent (we have not closed and the connection is not over).
    public var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    /// Whether the connection is over: `.closed` has been reported.
    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Whether zlib memory is held right now (for tests and memory accounting).
    public var holdsCompressionMemory: Bool {
        (inflater?.holdsStream ?? false) || (deflater?.holdsStream ?? false)
    }

    // MARK: Input

    /// Processes bytes from the transport, in pieces of any size.
    public func receive(_ bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) {
        _ = process(bytes, stoppingAfterMessage: false, into: &output)
    }

    /// Processes bytes up to and including the frame that completes the next data message, and
    /// returns how many it consumed; call again with the rest. A shell that answers messages
    /// (an echo, a request/reply) uses this so each answer is written before later frames are
    /// looked at: if a valid message and a bad frame arrive in one read, the answer still goes
    /// out ahead of our close frame, as a peer that pipelines expects. Everything is consumed
    /// once the connection is over.
    public func receiveUntilMessage(_ bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Int {
        process(bytes, stoppingAfterMessage: true, into: &output)
    }

    private func process(_ bytes: UnsafeRawBufferPointer, stoppingAfterMessage: Bool,
                         into output: inout WebSocketOutput) -> Int {
        if isClosed { return bytes.count }
        var index = 0
        do {
            while !isClosed, let event = try decoder.next(in: bytes, at: &index) {
                let isMessageEnd = stoppingAfterMessage && isDataMessageEnd(event)
                try handle(event, into: &output)
                if isMessageEnd { return index }
            }
        } catch {
            fail(error, into: &output)
        }
        return isClosed ? bytes.count : index
    }

    private func isDataMessageEnd(_ event: FrameDecoderEvent) -> Bool {
        guard case .frameEnd = event, let header = currentFrame else { return false }
        return header.isFinal && !header.opcode.isControl
    }

    /// Processes bytes from the transport; see `receive(_:into:)`.
    public func receive(_ bytes: [UInt8], into output: inout WebSocketOutput) {
        bytes.withUnsafeBytes { receive($0, into: &output) }
    }

    /// The transport reached end of input (or failed, or the close timeout expired). Unless the
    /// connection is already over, this reports `.closed(code: 1006, initiatedByPeer: true)`
    /// (RFC 6455 §7.1.5) or, after our own close, `.closed(1006, initiatedByPeer: false)`.
    public func receiveEndOfInput(into output: inout WebSocketOutput) {
        let initiatedByPeer: Bool
        switch state {
        case .closed: return
        case .open: initiatedByPeer = true
        case .closeSent: initiatedByPeer = false
        }
        finish(.closed(code: .abnormalClosure, reason: "", initiatedByPeer: initiatedByPeer), into: &output)
    }

    // MARK: Commands

    /// Sends a text message as one frame, compressed if permessage-deflate was negotiated.
    /// Returns false (and sends nothing) once we have closed or the connection is over.
    @discardableResult
    public func send(text: String, into output: inout WebSocketOutput) -> Bool {
        var text = text
        return text.withUTF8 { send(.text, payload: UnsafeRawBufferPointer($0), into: &output) }
    }

    /// Sends a text message whose bytes the caller guarantees are valid UTF-8.
    @discardableResult
    public func send(textBytes bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Bool {
        send(.text, payload: bytes, into: &output)
    }

    /// Sends a binary message as one frame; see `send(text:into:)`.
    @discardableResult
    public func send(binary bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Bool {
        send(.binary, payload: bytes, into: &output)
    }

    /// Sends a binary message as one frame; see `send(text:into:)`.
    @discardableResult
    public func send(binary bytes: [UInt8], into output: inout WebSocketOutput) -> Bool {
        bytes.withUnsafeBytes { send(.binary, payload: $0, into: &output) }
    }

    /// Appends a frame made once by `FrameEncoder.makeServerFrame` for many connections.
    /// A server-only shortcut: the caller picks the compressed variant only for connections
    /// whose `deflate` is non-nil with a server window at least the one it was made with.
    /// The shell may instead write the shared array directly after flushing `outbound`, which
    /// avoids even this copy; check `isOpen` first.
    @discardableResult
    public func send(sharedFrame frame: [UInt8], into output: inout WebSocketOutput) -> Bool {
        precondition(role == .server, "shared frames are unmasked server frames")
        guard isOpen else { return false }
        output.outbound.append(contentsOf: frame)
        return true
    }

    /// Sends a ping (RFC 6455 §5.5.2); the payload is at most 125 bytes.
    @discardableResult
    public func sendPing(_ payload: [UInt8] = [], into output: inout WebSocketOutput) -> Bool {
        precondition(payload.count <= 125, "control frame payloads are at most 125 bytes (RFC 6455 §5.5)")
        guard isOpen else { return false }
        payload.withUnsafeBytes { appendFrame(.ping, payload: $0, isCompressed: false, into: &output) }
        return true
    }

    /// Starts the close handshake (RFC 6455 §7.1.2). Only codes valid on the wire may be sent,
    /// and the reason must fit the 123 bytes left in a control frame. Does nothing once we
    /// have closed or the connection is over.
    public func close(code: CloseCode = .normalClosure, reason: String = "",
                      into output: inout WebSocketOutput) {
        precondition(code.isValidOnWire, "close code \(code) may not be sent (RFC 6455 §7.4)")
        precondition(reason.utf8.count <= 123, "close reason longer than 123 bytes (RFC 6455 §5.5)")
        guard isOpen else { return }
        appendClose(code: code, reason: reason, into: &output)
        state = .closeSent(code: code, reason: reason)
    }

    // MARK: Receiving frames

    private func handle(_ event: FrameDecoderEvent, into output: inout WebSocketOutput) throws(ProtocolViolation) {
        switch event {
        case .header(let header):
            currentFrame = header
            switch header.opcode {
            case .close, .ping, .pong:
                controlBuffer.removeAll(keepingCapacity: true)
            case .text, .binary:
                incoming = IncomingMessage(isText: header.opcode == .text, isCompressed: header.isCompressed)
                utf8.reset()
                if isOpen && !header.isCompressed {
                    // One exact allocation for the common single-frame message.
                    messageBuffer.reserveCapacity(header.payloadLength)
                }
            case .continuation:
                // No exact reservation here: growing by exactly each fragment would copy the
                // message once per fragment. Appending grows geometrically instead.
                break
            }

        case .payload(let piece, let phase):
            guard let header = currentFrame else {
                fatalError("internal inconsistency in WebSocketConnection: payload without a header")
            }
            if header.opcode.isControl {
                let start = controlBuffer.count
                controlBuffer.append(contentsOf: piece)
                header.maskingKey?.apply(to: &controlBuffer, range: start..<controlBuffer.count, phase: phase)
            } else if isOpen {
                try receiveDataPiece(piece, phase: phase, key: header.maskingKey)
            }

        case .frameEnd:
            guard let header = currentFrame else {
                fatalError("internal inconsistency in WebSocketConnection: frame end without a header")
            }
            currentFrame = nil
            switch header.opcode {
            case .ping:
                guard isOpen else { return }
                output.events.append(.ping(controlBuffer))
                if configuration.repliesToPings {
                    controlBuffer.withUnsafeBytes { appendFrame(.pong, payload: $0, isCompressed: false, into: &output) }
                }
            case .pong:
                guard isOpen else { return }
                output.events.append(.pong(controlBuffer))
            case .close:
                try receiveClose(into: &output)
            case .text, .binary, .continuation:
                if header.isFinal { try finishMessage(into: &output) }
            }
        }
    }

    private func receiveDataPiece(_ piece: UnsafeRawBufferPointer, phase: Int, key: MaskingKey?)
        throws(ProtocolViolation)
    {
        guard let message = incoming else {
            fatalError("internal inconsistency in WebSocketConnection: data without a message")
        }
        let start = messageBuffer.count
        if message.isCompressed {
            guard let inflater else {
                fatalError("internal inconsistency in WebSocketConnection: compressed frame without deflate")
            }
            if let key {
                inflateInput.removeAll(keepingCapacity: true)
                inflateInput.append(contentsOf: piece)
                key.apply(to: &inflateInput, range: 0..<inflateInput.count, phase: phase)
                let outcome = inflateInput.withUnsafeBytes { bytes in
                    Result { () throws(ProtocolViolation) in
                        try inflater.inflate(bytes, appendingTo: &messageBuffer, limit: configuration.maxMessageSize)
                    }
                }
                try outcome.get()
            } else {
                try inflater.inflate(piece, appendingTo: &messageBuffer, limit: configuration.maxMessageSize)
            }
        } else {
            messageBuffer.append(contentsOf: piece)
            key?.apply(to: &messageBuffer, range: start..<messageBuffer.count, phase: phase)
        }
        if message.isText && !utf8.validate(messageBuffer[start...]) { throw .invalidUTF8 }
    }

    private func finishMessage(into output: inout WebSocketOutput) throws(ProtocolViolation) {
        guard let message = incoming else {
            fatalError("internal inconsistency in WebSocketConnection: message end without a message")
        }
        incoming = nil
        guard isOpen else { return }
        if message.isCompressed {
            guard let inflater else {
                fatalError("internal inconsistency in WebSocketConnection: compressed frame without deflate")
            }
            let start = messageBuffer.count
            try inflater.finishMessage(appendingTo: &messageBuffer, limit: configuration.maxMessageSize)
            if message.isText && !utf8.validate(messageBuffer[start...]) { throw .invalidUTF8 }
        }
        if message.isText && !utf8.isComplete { throw .invalidUTF8 }
        var payload: [UInt8] = []
        swap(&payload, &messageBuffer)
        output.events.append(message.isText ? .text(payload) : .binary(payload))
    }

    private func receiveClose(into output: inout WebSocketOutput) throws(ProtocolViolation) {
        let code: CloseCode?
        let reason: String
        switch controlBuffer.count {
        case 0:
            code = nil
            reason = ""
        case 1:
            throw .truncatedCloseCode
        default:
            let received = CloseCode(rawValue: UInt16(controlBuffer[0]) << 8 | UInt16(controlBuffer[1]))
            guard received.isValidOnWire else { throw .invalidCloseCode(received.rawValue) }
            let reasonBytes = controlBuffer[2...]
            guard reasonBytes.withUnsafeBytes({ UTF8Validator.isValid($0) }) else { throw .invalidUTF8 }
            code = received
            reason = String(decoding: reasonBytes, as: UTF8.self)
        }
        switch state {
        case .open:
            // Echo the peer's code (RFC 6455 §5.5.1), or an empty close if it sent none.
            if let code {
                appendClose(code: code, reason: "", into: &output)
            } else {
                appendFrame(.close, payload: UnsafeRawBufferPointer(start: nil, count: 0), isCompressed: false,
                            into: &output)
            }
            finish(.closed(code: code ?? .noStatusReceived, reason: reason, initiatedByPeer: true), into: &output)
        case .closeSent(let ourCode, let ourReason):
            finish(.closed(code: ourCode, reason: ourReason, initiatedByPeer: false), into: &output)
        case .closed:
            fatalError("internal inconsistency in WebSocketConnection: frame processed after close")
        }
    }

    // MARK: Failing and finishing

    private func fail(_ violation: ProtocolViolation, into output: inout WebSocketOutput) {
        self.violation = violation
        let code = violation.closeCode
        if isOpen { appendClose(code: code, reason: "", into: &output) }
        finish(.closed(code: code, reason: "", initiatedByPeer: false), into: &output)
    }

    /// Enters `closed`: reports the last event, asks for the transport to close and drops
    /// every buffer and zlib stream.
    private func finish(_ event: WebSocketEvent, into output: inout WebSocketOutput) {
        state = .closed
        output.events.append(event)
        output.shouldCloseTransport = true
        inflater?.abandonMessage()
        incoming = nil
        currentFrame = nil
        messageBuffer = []
        controlBuffer = []
        inflateInput = []
        deflateOutput = []
    }

    // MARK: Sending frames

    private func send(_ opcode: Opcode, payload: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Bool {
        guard isOpen else { return false }
        if let deflater {
            deflateOutput.removeAll(keepingCapacity: true)
            deflater.compress(payload, appendingTo: &deflateOutput)
            deflateOutput.withUnsafeBytes { appendFrame(opcode, payload: $0, isCompressed: true, into: &output) }
        } else {
            appendFrame(opcode, payload: payload, isCompressed: false, into: &output)
        }
        return true
    }

    private func appendClose(code: CloseCode, reason: String, into output: inout WebSocketOutput) {
        var payload = (UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue))
        let reasonBytes = reason.utf8
        if reasonBytes.isEmpty {
            withUnsafeBytes(of: &payload) { appendFrame(.close, payload: $0, isCompressed: false, into: &output) }
        } else {
            var bytes: [UInt8] = [payload.0, payload.1]
            bytes.append(contentsOf: reasonBytes)
            bytes.withUnsafeBytes { appendFrame(.close, payload: $0, isCompressed: false, into: &output) }
        }
    }

    private func appendFrame(_ opcode: Opcode, payload: UnsafeRawBufferPointer, isCompressed: Bool,
                             into output: inout WebSocketOutput) {
        // Clients mask every frame with a fresh key (RFC 6455 §5.3); servers never mask.
        let key: MaskingKey? = role == .client
            ? MaskingKey(rawValue: UInt32(truncatingIfNeeded: maskingKeyGenerator.next()))
            : nil
        FrameEncoder.appendFrame(opcode: opcode, isCompressed: isCompressed, payload: payload, maskingKey: key,
                                 to: &output.outbound)
    }
}
