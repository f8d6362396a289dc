/// The decoded fixed part of a frame (RFC 6455 §5.2), known before any payload byte.
///
/// Declared widest field first, so it packs into 16 bytes (an optional one too): the decoder
/// and each connection hold one.
public struct FrameHeader: Sendable, Hashable {
    /// Payload length in bytes; below 2^63 by construction.
    public var payloadLength: Int
    /// Present on client frames only (RFC 6455 §5.3).
    public var maskingKey: MaskingKey?
    /// FIN: this frame ends its message.
    public var isFinal: Bool
    /// RSV1 under permessage-deflate: the message this frame starts is compressed (RFC 7692 §6).
    public var isCompressed: Bool
    public var opcode: Opcode

    public init(isFinal: Bool = true, isCompressed: Bool = false, opcode: Opcode,
                maskingKey: MaskingKey? = nil, payloadLength: Int) {
        self.isFinal = isFinal
        self.isCompressed = isCompressed
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payloadLength = payloadLength
    }
}
