// WebSocket connection state machine (RFC 6455 §5–§7, RFC 7692 §6), sans-I/O.
//
// Theory of operation.
//
// A connection starts after a successful upgrade handshake and is driven by three kinds of
// input: bytes from the transport (`receive`), the end of those bytes (`receiveEndOfInput`)
// and commands from the application (`send`, `sendPing`, `close`). Every call appends what
// it produced to a caller-owned `WebSocketOutput`: events for the application, bytes for the
// transport and a flag asking the transport to close. Nothing here touches a socket, a clock
// or a queue; the I/O shell performs the output. It is not thread-safe: the shell confines
// each connection to one serial queue and makes every call from it. The machine is a value
// (`WebSocketStateMachine`), so a shell that holds many can keep each inside its own
// connection object; `WebSocketConnection` is the same machine behind a reference.
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
//
// Memory: a server holds thousands of these, mostly idle, so one keeps only what is its own.
// The limits are a `WebSocketConfiguration.Shared` that every connection of a route points to
// (the frame decoder keeps only its progress and is handed the limits); what is rare is boxed
// (the close we sent, the violation that failed us); a client's masking keys are a parameter
// of each call that may send a frame (`MaskingKeySource`, which `WebSocketConnection` keeps
// for its client), so a server's machine holds nothing for them; and no buffer outlives the
// call or the frame that needs it: control
// payloads are dropped once handled, masked compressed input is unmasked through a small stack
// buffer on its way to the inflater, and outgoing compression uses the caller's
// `WebSocketOutput` as its scratch space (a server shares one per event loop).

/// A client's source of masking keys (RFC 6455 §5.3: a fresh, unpredictable key per frame).
/// A reference, so a connection's copy of it draws from one generator.
public final class MaskingKeySource {
    private var generator: any RandomNumberGenerator

    /// `generator`: the system's secure generator in production; a seeded one in tests.
    public init(_ generator: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.generator = generator
    }

    public func next() -> MaskingKey {
        MaskingKey(rawValue: UInt32(truncatingIfNeeded: generator.next()))
    }
}

/// One established WebSocket connection, either end, as a value: a shell that holds many
/// (the server) keeps it inline in its own connection object; `WebSocketConnection` holds one
/// by reference for everyone else. See the theory of operation above. Never copy one in use:
/// copies would share its compressors.
public struct WebSocketStateMachine {
    enum State {
        case open
        /// We sent a close; its code and reason are reported when the peer's close arrives.
        indirect case closeSent(code: CloseCode, reason: String)
        case closed
        /// Closed because the peer broke the protocol.
        indirect case failed(ProtocolViolation)
    }

    /// The data message being received.
    struct IncomingMessage {
        var isText: Bool
        var isCompressed: Bool
    }

    /// What the payload and the end of the frame being received need of its header: eight
    /// bytes, where the whole header (with its length, used only when it arrives) takes sixteen.
    struct FrameInProgress {
        var maskingKey: MaskingKey?
        var opcode: Opcode
        var isFinal: Bool

        init(_ header: FrameHeader) {
            maskingKey = header.maskingKey
            opcode = header.opcode
            isFinal = header.isFinal
        }
    }


    /// Masked compressed input is unmasked through a stack buffer of this many bytes at a time.
    public static let unmaskingChunkSize = 4096

    let shared: WebSocketConfiguration.Shared
    let inflater: MessageInflater?
    let deflater: MessageDeflater?
    var state: State = .open
    var messageBuffer: [UInt8] = []
    /// The payload of the control frame being received; empty between control frames.
    var controlBuffer: [UInt8] = []
    private var decoder = FrameDecoder.Progress()
    var currentFrame: FrameInProgress?
    /// The permessage-deflate parameters agreed in the handshake, or nil.
    public let deflate: DeflateParameters?
    var incoming: IncomingMessage?
    var utf8 = UTF8Validator()
    public let role: Role

    /// Limits and ping behaviour.
    public var configuration: WebSocketConfiguration { shared.configuration }

    /// Why we failed the connection, if we did; for logs.
    public var violation: ProtocolViolation? {
        if case .failed(let violation) = state { return violation }
        return nil
    }

    /// A connection whose limits are `shared` with others (a server route's connections).
    /// A client passes its `MaskingKeySource` to every call that may send a frame (randomness
    /// is a parameter, and a server, which masks nothing, holds none).
    public init(role: Role, sharing shared: WebSocketConfiguration.Shared, deflate: DeflateParameters? = nil) {
        self.role = role
        self.shared = shared
        self.deflate = deflate
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
        switch state {
        case .closed, .failed: true
        case .open, .closeSent: false
        }
    }

    /// What the frame decoder enforces, from the shared configuration and this connection's
    /// role and deflate agreement.
    private var decoderLimits: FrameDecoder.Limits {
        let configuration = shared.configuration
        return FrameDecoder.Limits(role: role, maxFrameSize: configuration.maxFrameSize,
                                   maxMessageSize: configuration.maxMessageSize,
                                   maxFragmentsPerMessage: configuration.maxFragmentsPerMessage,
                                   allowsCompression: deflate != nil)
    }

    /// Whether a receive buffer holds storage right now (for tests and memory accounting):
    /// only while a message or a control frame is being received.
    public var holdsReceiveBuffers: Bool {
        messageBuffer.capacity > 0 || controlBuffer.capacity > 0
    }

    /// Whether zlib memory is held right now (for tests and memory accounting).
    public var holdsCompressionMemory: Bool {
        (inflater?.holdsStream ?? false) || (deflater?.holdsStream ?? false)
    }

    // MARK: Input

    /// Processes bytes from the transport, in pieces of any size.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput,
                                  maskingKeys: MaskingKeySource? = nil) {
        _ = process(bytes, stoppingAfterMessage: false, into: &output, maskingKeys: maskingKeys)
    }

    /// Processes bytes up to and including the frame that completes the next data message, and
    /// returns how many it consumed; call again with the rest. A shell that answers messages
    /// (an echo, a request/reply) uses this so each answer is written before later frames are
    /// looked at: if a valid message and a bad frame arrive in one read, the answer still goes
    /// out ahead of our close frame, as a peer that pipelines expects. Everything is consumed
    /// once the connection is over.
    public mutating func receiveUntilMessage(_ bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput,
                                              maskingKeys: MaskingKeySource? = nil) -> Int {
        process(bytes, stoppingAfterMessage: true, into: &output, maskingKeys: maskingKeys)
    }

    private mutating func process(_ bytes: UnsafeRawBufferPointer, stoppingAfterMessage: Bool,
                                  into output: inout WebSocketOutput, maskingKeys: MaskingKeySource?) -> Int {
        if isClosed { return bytes.count }
        let limits = decoderLimits
        var index = 0
        do {
            while !isClosed, let event = try decoder.next(in: bytes, at: &index, limits: limits) {
                let isMessageEnd = stoppingAfterMessage && isDataMessageEnd(event)
                try handle(event, into: &output, maskingKeys: maskingKeys)
                if isMessageEnd { return index }
            }
        } catch {
            fail(error, into: &output, maskingKeys: maskingKeys)
        }
        return isClosed ? bytes.count : index
    }

    private func isDataMessageEnd(_ event: FrameDecoderEvent) -> Bool {
        guard case .frameEnd = event, let header = currentFrame else { return false }
        return header.isFinal && !header.opcode.isControl
    }

    /// Processes bytes from the transport; see `receive(_:into:)`.
    public mutating func receive(_ bytes: [UInt8], into output: inout WebSocketOutput,
                                 maskingKeys: MaskingKeySource? = nil) {
        bytes.withUnsafeBytes { receive($0, into: &output, maskingKeys: maskingKeys) }
    }

    /// The transport reached end of input (or failed, or the close timeout expired). Unless the
    /// connection is already over, this reports `.closed(code: 1006, initiatedByPeer: true)`
    /// (RFC 6455 §7.1.5) or, after our own close, `.closed(1006, initiatedByPeer: false)`.
    public mutating func receiveEndOfInput(into output: inout WebSocketOutput) {
        let initiatedByPeer: Bool
        switch state {
        case .closed, .failed: return
        case .open: initiatedByPeer = true
        case .closeSent: initiatedByPeer = false
        }
        finish(.closed(code: .abnormalClosure, reason: "", initiatedByPeer: initiatedByPeer), into: &output)
    }

    // MARK: Commands

    /// Sends a text message as one frame, compressed if permessage-deflate was negotiated.
    /// Returns false (and sends nothing) once we have closed or the connection is over.
    @discardableResult
    public mutating func send(text: String, into output: inout WebSocketOutput,
                              maskingKeys: MaskingKeySource? = nil) -> Bool {
        var text = text
        return text.withUTF8 {
            send(.text, payload: UnsafeRawBufferPointer($0), into: &output, maskingKeys: maskingKeys)
        }
    }

    /// Sends a text message whose bytes the caller guarantees are valid UTF-8.
    @discardableResult
    public mutating func send(textBytes bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput,
                               maskingKeys: MaskingKeySource? = nil) -> Bool {
        send(.text, payload: bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Sends a binary message as one frame; see `send(text:into:)`.
    @discardableResult
    public mutating func send(binary bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput,
                               maskingKeys: MaskingKeySource? = nil) -> Bool {
        send(.binary, payload: bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Sends a binary message as one frame; see `send(text:into:)`.
    @discardableResult
    public mutating func send(binary bytes: [UInt8], into output: inout WebSocketOutput,
                              maskingKeys: MaskingKeySource? = nil) -> Bool {
        bytes.withUnsafeBytes { send(.binary, payload: $0, into: &output, maskingKeys: maskingKeys) }
    }

    /// Appends a frame made once by `FrameEncoder.makeServerFrame` for many connections.
    /// A server-only shortcut: the caller picks the compressed variant only for connections
    /// whose `deflate` is non-nil with a server window at least the one it was made with.
    /// The shell may instead write the shared array directly after flushing `outbound`, which
    /// avoids even this copy; check `isOpen` first.
    @discardableResult
    public mutating func send(sharedFrame frame: [UInt8], into output: inout WebSocketOutput) -> Bool {
        precondition(role == .server, "shared frames are unmasked server frames")
        guard isOpen else { return false }
        output.outbound.append(contentsOf: frame)
        return true
    }

    /// Sends a ping (RFC 6455 §5.5.2); the payload is at most 125 bytes.
    @discardableResult
    public mutating func sendPing(_ payload: [UInt8] = [], into output: inout WebSocketOutput,
                                  maskingKeys: MaskingKeySource? = nil) -> Bool {
        precondition(payload.count <= 125, "control frame payloads are at most 125 bytes (RFC 6455 §5.5)")
        guard isOpen else { return false }
        payload.withUnsafeBytes {
            appendFrame(.ping, payload: $0, isCompressed: false, into: &output, maskingKeys: maskingKeys)
        }
        return true
    }

    /// Starts the close handshake (RFC 6455 §7.1.2). Only codes valid on the wire may be sent,
    /// and the reason must fit the 123 bytes left in a control frame. Does nothing once we
    /// have closed or the connection is over.
    public mutating func close(code: CloseCode = .normalClosure, reason: String = "",
                                into output: inout WebSocketOutput, maskingKeys: MaskingKeySource? = nil) {
        precondition(code.isValidOnWire, "close code \(code) may not be sent (RFC 6455 §7.4)")
        precondition(reason.utf8.count <= 123, "close reason longer than 123 bytes (RFC 6455 §5.5)")
        guard isOpen else { return }
        appendClose(code: code, reason: reason, into: &output, maskingKeys: maskingKeys)
        state = .closeSent(code: code, reason: reason)
    }

    // MARK: Failing and finishing

    private mutating func fail(_ violation: ProtocolViolation, into output: inout WebSocketOutput,
                               maskingKeys: MaskingKeySource?) {
        let code = violation.closeCode
        if isOpen { appendClose(code: code, reason: "", into: &output, maskingKeys: maskingKeys) }
        finish(.closed(code: code, reason: "", initiatedByPeer: false), into: &output)
        state = .failed(violation)
    }

    /// Enters `closed`: reports the last event, asks for the transport to close and drops
    /// every buffer and zlib stream.
    mutating func finish(_ event: WebSocketEvent, into output: inout WebSocketOutput) {
        state = .closed
        output.events.append(event)
        output.shouldCloseTransport = true
        inflater?.abandonMessage()
        incoming = nil
        currentFrame = nil
        messageBuffer = []
        controlBuffer = []
    }
}
