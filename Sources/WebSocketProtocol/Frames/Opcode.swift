/// The four-bit frame opcode (RFC 6455 §5.2, registry in §11.8).
///
/// Values 3–7 and 11–15 are reserved; a frame carrying one fails the connection with 1002
/// (RFC 6455 §5.2), which is why the initializer is failable rather than mapping to "unknown".
public enum Opcode: UInt8, Sendable, Hashable {
    /// Continues a fragmented message (RFC 6455 §5.4).
    case continuation = 0x0
    /// First frame of a UTF-8 text message (RFC 6455 §5.6).
    case text = 0x1
    /// First frame of a binary message (RFC 6455 §5.6).
    case binary = 0x2
    /// Close control frame (RFC 6455 §5.5.1).
    case close = 0x8
    /// Ping control frame (RFC 6455 §5.5.2).
    case ping = 0x9
    /// Pong control frame (RFC 6455 §5.5.3).
    case pong = 0xA

    /// Control frames have the high bit of the opcode set (RFC 6455 §5.5).
    @inlinable
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
