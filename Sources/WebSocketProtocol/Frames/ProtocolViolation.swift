/// Everything a peer can do wrong on an established WebSocket connection.
///
/// These are the peer's faults, never ours: caller misuse traps with `precondition` instead.
/// `closeCode` is the one place where a failure becomes a close status code.
public enum ProtocolViolation: Error, Sendable, Hashable {
    /// A client sent a frame without the mask bit (RFC 6455 §5.1).
    case unmaskedClientFrame
    /// A server sent a frame with the mask bit (RFC 6455 §5.1).
    case maskedServerFrame
    /// RSV2/RSV3 set, or RSV1 set without permessage-deflate or on a frame that cannot carry it
    /// (RFC 6455 §5.2, RFC 7692 §6).
    case reservedBitsSet
    /// An opcode from the reserved ranges 3–7 or 11–15 (RFC 6455 §5.2).
    case unknownOpcode(UInt8)
    /// A control frame without FIN (RFC 6455 §5.5).
    case fragmentedControlFrame
    /// A control frame with more than 125 bytes of payload (RFC 6455 §5.5).
    case oversizedControlFrame
    /// A 64-bit payload length with the most significant bit set (RFC 6455 §5.2).
    case payloadLengthHighBitSet
    /// A continuation frame with no message in progress (RFC 6455 §5.4).
    case unexpectedContinuation
    /// A new text/binary frame while a fragmented message is still open (RFC 6455 §5.4).
    case unfinishedFragmentedMessage
    /// A frame longer than the configured maximum frame size.
    case frameTooLarge(length: UInt64, limit: Int)
    /// A message longer than the configured maximum message size (on the wire or inflated).
    case messageTooLarge(limit: Int)
    /// A message split into more frames than the configured maximum.
    case tooManyFragments(limit: Int)
    /// A text message or close reason that is not valid UTF-8 (RFC 6455 §8.1).
    case invalidUTF8
    /// A close frame with a one-byte payload (RFC 6455 §5.5.1).
    case truncatedCloseCode
    /// A close frame whose code may not appear on the wire (RFC 6455 §7.4).
    case invalidCloseCode(UInt16)
    /// A compressed message that zlib cannot inflate (RFC 7692 §7.2.2).
    case invalidCompressedData

    /// The code we send in our close frame when failing the connection for this reason.
    ///
    /// Size limits map to 1009 and bad data to 1007 (RFC 6455 §7.4.1); undecodable compressed
    /// data is bad data too. Everything else about framing is a protocol error, 1002.
    public var closeCode: CloseCode {
        switch self {
        case .frameTooLarge, .messageTooLarge, .tooManyFragments:
            return .messageTooBig
        case .invalidUTF8, .invalidCompressedData:
            return .invalidFramePayloadData
        case .unmaskedClientFrame, .maskedServerFrame, .reservedBitsSet, .unknownOpcode,
             .fragmentedControlFrame, .oversizedControlFrame, .payloadLengthHighBitSet,
             .unexpectedContinuation, .unfinishedFragmentedMessage, .truncatedCloseCode,
             .invalidCloseCode:
            return .protocolError
        }
    }
}
