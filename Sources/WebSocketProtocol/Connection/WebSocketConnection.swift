// WebSocketConnection: the WebSocket state machine (WebSocketStateMachine.swift) behind a
// reference, for shells that hold one connection per object (the client library, the load-test
// driver, tests and the fuzzer). It keeps a client's masking keys and passes them to the
// machine; a server that holds many connections keeps the machine inline instead.

/// One established WebSocket connection, either end: a `WebSocketStateMachine` held by
/// reference, with the same inputs and commands. See the theory of operation above.
public final class WebSocketConnection {
    private var machine: WebSocketStateMachine
    /// A client's; nil for a server.
    private let maskingKeys: MaskingKeySource?

    /// - Parameters:
    ///   - role: which end we are; decides masking in both directions.
    ///   - configuration: limits and ping behaviour.
    ///   - deflate: the negotiated permessage-deflate parameters, nil if not negotiated.
    ///   - maskingKeyGenerator: source of client masking keys (unused by servers). A parameter so
    ///     tests are deterministic; the default is the system's secure generator.
    public convenience init(role: Role, configuration: WebSocketConfiguration = WebSocketConfiguration(),
                            deflate: DeflateParameters? = nil,
                            maskingKeyGenerator: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.init(role: role, sharing: WebSocketConfiguration.Shared(configuration), deflate: deflate,
                  maskingKeyGenerator: maskingKeyGenerator)
    }

    /// A connection whose limits are `shared` with others.
    /// - Parameters:
    ///   - maskingKeyGenerator: source of client masking keys, ignored by servers; nil: the
    ///     system's secure generator.
    public init(role: Role, sharing shared: WebSocketConfiguration.Shared, deflate: DeflateParameters? = nil,
                maskingKeyGenerator: (any RandomNumberGenerator)? = nil) {
        machine = WebSocketStateMachine(role: role, sharing: shared, deflate: deflate)
        switch role {
        case .server: maskingKeys = nil
        case .client: maskingKeys = MaskingKeySource(maskingKeyGenerator ?? SystemRandomNumberGenerator())
        }
    }

    public var role: Role { machine.role }
    /// Limits and ping behaviour.
    public var configuration: WebSocketConfiguration { machine.configuration }
    /// The permessage-deflate parameters agreed in the handshake, or nil.
    public var deflate: DeflateParameters? { machine.deflate }
    /// Why we failed the connection, if we did; for logs.
    public var violation: ProtocolViolation? { machine.violation }
    /// Whether messages may still be sent (we have not closed and the connection is not over).
    public var isOpen: Bool { machine.isOpen }
    /// Whether the connection is over: `.closed` has been reported.
    public var isClosed: Bool { machine.isClosed }
    /// Whether a receive buffer holds storage right now (for tests and memory accounting).
    public var holdsReceiveBuffers: Bool { machine.holdsReceiveBuffers }
    /// Whether zlib memory is held right now (for tests and memory accounting).
    public var holdsCompressionMemory: Bool { machine.holdsCompressionMemory }

    /// Processes bytes from the transport, in pieces of any size.
    public func receive(_ bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) {
        machine.receive(bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Processes bytes up to and including the frame that completes the next data message;
    /// see `WebSocketStateMachine.receiveUntilMessage(_:into:)`.
    public func receiveUntilMessage(_ bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Int {
        machine.receiveUntilMessage(bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Processes bytes from the transport; see `receive(_:into:)`.
    public func receive(_ bytes: [UInt8], into output: inout WebSocketOutput) {
        machine.receive(bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// The transport reached end of input; see `WebSocketStateMachine.receiveEndOfInput(into:)`.
    public func receiveEndOfInput(into output: inout WebSocketOutput) {
        machine.receiveEndOfInput(into: &output)
    }

    /// Sends a text message as one frame, compressed if permessage-deflate was negotiated.
    /// Returns false (and sends nothing) once we have closed or the connection is over.
    @discardableResult
    public func send(text: String, into output: inout WebSocketOutput) -> Bool {
        machine.send(text: text, into: &output, maskingKeys: maskingKeys)
    }

    /// Sends a text message whose bytes the caller guarantees are valid UTF-8.
    @discardableResult
    public func send(textBytes bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Bool {
        machine.send(textBytes: bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Sends a binary message as one frame; see `send(text:into:)`.
    @discardableResult
    public func send(binary bytes: UnsafeRawBufferPointer, into output: inout WebSocketOutput) -> Bool {
        machine.send(binary: bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Sends a binary message as one frame; see `send(text:into:)`.
    @discardableResult
    public func send(binary bytes: [UInt8], into output: inout WebSocketOutput) -> Bool {
        machine.send(binary: bytes, into: &output, maskingKeys: maskingKeys)
    }

    /// Appends a frame made once by `FrameEncoder.makeServerFrame` for many connections; see
    /// `WebSocketStateMachine.send(sharedFrame:into:)`.
    @discardableResult
    public func send(sharedFrame frame: [UInt8], into output: inout WebSocketOutput) -> Bool {
        machine.send(sharedFrame: frame, into: &output)
    }

    /// Sends a ping (RFC 6455 §5.5.2); the payload is at most 125 bytes.
    @discardableResult
    public func sendPing(_ payload: [UInt8] = [], into output: inout WebSocketOutput) -> Bool {
        machine.sendPing(payload, into: &output, maskingKeys: maskingKeys)
    }

    /// Starts the close handshake (RFC 6455 §7.1.2); see `WebSocketStateMachine.close(code:reason:into:)`.
    public func close(code: CloseCode = .normalClosure, reason: String = "", into output: inout WebSocketOutput) {
        machine.close(code: code, reason: reason, into: &output, maskingKeys: maskingKeys)
    }
}
