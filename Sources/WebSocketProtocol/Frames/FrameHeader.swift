/// The decoded fixed part of a frame (RFC 6455 §5.2), known before any payload byte.
public struct FrameHeader: Sendable, Hashable {
    /// FIN: this frame ends its message.
    public var isFinal: Bool
    /// RSV1 under permessage-deflate: the message this frame starts is compressed (RFC 7692 §6).
    public var isCompressed: Bool
    public var opcode: Opcode
    /// Present on client frames only (RFC 6455 §5.3).
    public var maskingKey: MaskingKey?
    /// Payload length in bytes; below 2^63 by construction.
    public var payloadLength: Int

    public init(isFinal: Bool = true, isCompressed: Bool = false, opcode: Opcode,
                maskingKey: MaskingKey? = nil, payloadLength: Int) {
        self.isFinal = isFinal
        self.isCompressed = isCompressed
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payloadLength = payloadLength
    }
}
