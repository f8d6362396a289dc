/// What the decoder found next in the input.
public enum FrameDecoderEvent {
    /// A complete, validated header. Every limit that depends on the header has been checked.
    case header(FrameHeader)
    /// The next piece of the current frame's payload, still masked if the frame is masked.
    /// `maskPhase` is the payload offset of `bytes.first` modulo 4, ready for
    /// `MaskingKey.apply(to:phase:)`. The pointer borrows the caller's input: use it before
    /// calling the decoder again.
    case payload(UnsafeRawBufferPointer, maskPhase: Int)
    /// The current frame's payload is complete.
    case frameEnd
}

/// An incremental RFC 6455 §5.2 frame parser: a state enum plus a step function.
///
/// Input arrives in arbitrary pieces; `next(in:at:)` consumes from `index` onward and returns one
/// event at a time, or `nil` when it needs more bytes. Header bytes are folded into the state
/// one at a time (a header is at most 14 bytes), so nothing consumed is ever looked at again;
/// payload is handed out as slices of the caller's input without copying.
///
/// Every rule that can be decided from a header is decided as soon as the deciding byte
/// arrives: opcode, RSV bits, FIN on control frames and fragmentation order on the first byte;
/// the mask bit and the 125-byte control limit on the second; frame size, message size and
/// fragment count when the length is complete, before a single payload byte is buffered.
/// The decoder tracks which message is open so it can police continuation frames; it does not
/// look inside payloads (UTF-8 and close payloads are the connection's job).
///
/// After a violation is thrown the decoder is spent: every later call throws it again.
///
/// The limits are the same for every connection made with one configuration, so they are kept
/// apart from what changes byte by byte (`Progress`): a WebSocket connection holds only the
/// progress and passes the limits in from the configuration it shares with its peers.
public struct FrameDecoder: Sendable {
    /// What the decoder enforces.
    struct Limits: Sendable {
        /// Which side we are: a server expects masked frames, a client unmasked ones.
        var role: Role
        var maxFrameSize: Int
        var maxMessageSize: Int
        var maxFragmentsPerMessage: Int
        /// RSV1 is legal on the first frame of a data message only if permessage-deflate was agreed.
        var allowsCompression: Bool

        init(role: Role, maxFrameSize: Int, maxMessageSize: Int, maxFragmentsPerMessage: Int, allowsCompression: Bool) {
            precondition(maxFrameSize >= 125, "a decoder must accept full-size control frames")
            precondition(maxMessageSize >= 0 && maxFragmentsPerMessage >= 1, "limits must be positive")
            precondition(maxFragmentsPerMessage <= Int(UInt32.max), "at most 2^32 - 1 fragments per message")
            self.role = role
            self.maxFrameSize = maxFrameSize
            self.maxMessageSize = maxMessageSize
            self.maxFragmentsPerMessage = maxFragmentsPerMessage
            self.allowsCompression = allowsCompression
        }
    }

    let limits: Limits
    var progress = Progress()

    /// Which side we are: a server expects masked frames, a client unmasked ones.
    public var role: Role { limits.role }
    /// Largest payload accepted in one frame.
    public var maxFrameSize: Int { limits.maxFrameSize }
    /// Largest total payload of one message, summed over its frames on the wire.
    public var maxMessageSize: Int { limits.maxMessageSize }
    /// Largest number of frames one message may be split into.
    public var maxFragmentsPerMessage: Int { limits.maxFragmentsPerMessage }
    /// RSV1 is legal on the first frame of a data message only if permessage-deflate was agreed.
    public var allowsCompression: Bool { limits.allowsCompression }

    public init(role: Role, maxFrameSize: Int, maxMessageSize: Int, maxFragmentsPerMessage: Int,
                allowsCompression: Bool) {
        limits = Limits(role: role, maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize,
                        maxFragmentsPerMessage: maxFragmentsPerMessage, allowsCompression: allowsCompression)
    }

    /// Whether the decoder sits between frames (useful to tell a clean EOF from a torn frame).
    public var isAtFrameBoundary: Bool { progress.isAtFrameBoundary }

    /// Consumes bytes of `input` from `index` and returns the next event, or `nil` once all of
    /// `input` has been consumed without completing one.
    public mutating func next(in input: UnsafeRawBufferPointer, at index: inout Int)
        throws(ProtocolViolation) -> FrameDecoderEvent?
    {
        try progress.next(in: input, at: &index, limits: limits)
    }
}

extension FrameDecoder {
    /// Where the decoder is in the stream: the state enum and the message in progress. The
    /// step function takes the limits as a parameter.
    struct Progress: Sendable {
        /// Extended lengths and masking keys are accumulated in the header under construction
        /// (its `payloadLength`, its key), so a state carries at most a header and a count.
        enum State: Sendable {
            case awaitingFirstByte
            case awaitingLengthByte(isFinal: Bool, isCompressed: Bool, opcode: Opcode)
            case awaitingExtendedLength(FrameHeader, bytesLeft: UInt8)
            case awaitingMaskingKey(FrameHeader, bytesLeft: UInt8)
            case payload(remaining: Int, phase: Int)
            case failed(ProtocolViolation)
        }

        var state: State = .awaitingFirstByte
        /// Whether the data message in progress is compressed (RSV1 on its first frame).
        var isOpenMessageCompressed = false
        var openMessageFragments: UInt32 = 0
        /// Wire bytes of the data message in progress, or `noOpenMessage` between messages (an
        /// optional would take another eight bytes).
        var openMessageLength = Progress.noOpenMessage

        static let noOpenMessage = -1

        var isMessageOpen: Bool { openMessageLength != Self.noOpenMessage }

        var isAtFrameBoundary: Bool {
            if case .awaitingFirstByte = state { return true }
            return false
        }

        mutating func next(in input: UnsafeRawBufferPointer, at index: inout Int, limits: Limits)
            throws(ProtocolViolation) -> FrameDecoderEvent?
        {
            if case .failed(let violation) = state { throw violation }
            do {
                return try step(in: input, at: &index, limits: limits)
            } catch {
                state = .failed(error)
                throw error
            }
        }

        mutating func step(in input: UnsafeRawBufferPointer, at index: inout Int, limits: Limits)
            throws(ProtocolViolation) -> FrameDecoderEvent?
        {
            while true {
                switch state {
                case .failed(let violation):
                    throw violation

                case .payload(let remaining, let phase):
                    if remaining == 0 {
                        state = .awaitingFirstByte
                        return .frameEnd
                    }
                    let available = input.count - index
                    guard available > 0 else { return nil }
                    let take = min(available, remaining)
                    let slice = UnsafeRawBufferPointer(rebasing: input[index..<(index + take)])
                    index += take
                    state = .payload(remaining: remaining - take, phase: (phase + take) & 3)
                    return .payload(slice, maskPhase: phase)

                case .awaitingFirstByte:
                    guard index < input.count else { return nil }
                    let byte = input[index]
                    index += 1
                    try acceptFirstByte(byte, limits: limits)

                case .awaitingLengthByte(let isFinal, let isCompressed, let opcode):
                    guard index < input.count else { return nil }
                    let byte = input[index]
                    index += 1
                    let header = FrameHeader(isFinal: isFinal, isCompressed: isCompressed, opcode: opcode,
                                             maskingKey: byte & 0x80 != 0 ? MaskingKey(rawValue: 0) : nil,
                                             payloadLength: 0)
                    if let complete = try acceptLengthByte(byte & 0x7F, header: header, limits: limits),
                       let event = completeHeader(complete) {
                        return event
                    }

                case .awaitingExtendedLength(var header, let bytesLeft):
                    guard index < input.count else { return nil }
                    // The length so far is kept in `payloadLength` as the bit pattern of a UInt64.
                    let value = UInt64(bitPattern: Int64(header.payloadLength)) << 8 | UInt64(input[index])
                    index += 1
                    header.payloadLength = Int(Int64(bitPattern: value))
                    if bytesLeft > 1 {
                        state = .awaitingExtendedLength(header, bytesLeft: bytesLeft - 1)
                        continue
                    }
                    // RFC 6455 §5.2: "the most significant bit MUST be 0". Non-minimal encodings are
                    // tolerated; accepting them costs nothing.
                    if value & (1 << 63) != 0 { throw .payloadLengthHighBitSet }
                    try checkLimits(header, length: value, limits: limits)
                    if let event = completeHeader(header) { return event }

                case .awaitingMaskingKey(var header, let bytesLeft):
                    guard index < input.count else { return nil }
                    let accumulated = header.maskingKey?.rawValue ?? 0
                    let value = accumulated | UInt32(input[index]) << (8 * UInt32(4 - bytesLeft))
                    index += 1
                    header.maskingKey = MaskingKey(rawValue: value)
                    if bytesLeft > 1 {
                        state = .awaitingMaskingKey(header, bytesLeft: bytesLeft - 1)
                        continue
                    }
                    state = beginPayload(header)
                    return .header(header)
                }
            }
        }

        mutating func acceptFirstByte(_ byte: UInt8, limits: Limits) throws(ProtocolViolation) {
            let isFinal = byte & 0x80 != 0
            let rsv1 = byte & 0x40 != 0
            if byte & 0x30 != 0 { throw .reservedBitsSet }
            guard let opcode = Opcode(rawValue: byte & 0x0F) else { throw .unknownOpcode(byte & 0x0F) }
            if opcode.isControl {
                if !isFinal { throw .fragmentedControlFrame }
                if rsv1 { throw .reservedBitsSet }
            } else if opcode == .continuation {
                if !isMessageOpen { throw .unexpectedContinuation }
                if rsv1 { throw .reservedBitsSet }
                if openMessageFragments >= limits.maxFragmentsPerMessage {
                    throw .tooManyFragments(limit: limits.maxFragmentsPerMessage)
                }
            } else {
                if isMessageOpen { throw .unfinishedFragmentedMessage }
                if rsv1 && !limits.allowsCompression { throw .reservedBitsSet }
            }
            state = .awaitingLengthByte(isFinal: isFinal, isCompressed: rsv1, opcode: opcode)
        }

        /// Checks the mask bit and the 7-bit length. Returns the header when the 7-bit length is the
        /// final length; otherwise moves on to the extended length and returns nil.
        mutating func acceptLengthByte(_ length7: UInt8, header: FrameHeader, limits: Limits)
            throws(ProtocolViolation) -> FrameHeader?
        {
            switch limits.role {
            case .server where header.maskingKey == nil: throw .unmaskedClientFrame
            case .client where header.maskingKey != nil: throw .maskedServerFrame
            default: break
            }
            if header.opcode.isControl && length7 > 125 { throw .oversizedControlFrame }
            switch length7 {
            case 126:
                state = .awaitingExtendedLength(header, bytesLeft: 2)
                return nil
            case 127:
                state = .awaitingExtendedLength(header, bytesLeft: 8)
                return nil
            default:
                try checkLimits(header, length: UInt64(length7), limits: limits)
                var complete = header
                complete.payloadLength = Int(length7)
                return complete
            }
        }

        /// The length is known: either wait for the masking key or start the payload.
        mutating func completeHeader(_ header: FrameHeader) -> FrameDecoderEvent? {
            if header.maskingKey != nil {
                state = .awaitingMaskingKey(header, bytesLeft: 4)
                return nil
            }
            state = beginPayload(header)
            return .header(header)
        }

        func checkLimits(_ header: FrameHeader, length: UInt64, limits: Limits) throws(ProtocolViolation) {
            let opcode = header.opcode
            let isCompressed = opcode == .continuation ? isOpenMessageCompressed : header.isCompressed
            let frameLimit = isCompressed ? FrameDecoder.compressedAllowance(for: limits.maxFrameSize) : limits.maxFrameSize
            if length > UInt64(frameLimit) { throw .frameTooLarge(length: length, limit: limits.maxFrameSize) }
            if opcode.isControl { return }
            let messageLimit = isCompressed ? FrameDecoder.compressedAllowance(for: limits.maxMessageSize) : limits.maxMessageSize
            let soFar = opcode == .continuation && isMessageOpen ? openMessageLength : 0
            if Int(length) > messageLimit - soFar { throw .messageTooLarge(limit: limits.maxMessageSize) }
        }

        /// Records the frame against the open message and moves to its payload.
        mutating func beginPayload(_ header: FrameHeader) -> State {
            switch header.opcode {
            case .text, .binary:
                openMessageLength = header.isFinal ? Self.noOpenMessage : header.payloadLength
                openMessageFragments = 1
                isOpenMessageCompressed = header.isCompressed
            case .continuation:
                guard isMessageOpen else {
                    fatalError("internal inconsistency in FrameDecoder: continuation without a message")
                }
                openMessageLength = header.isFinal ? Self.noOpenMessage : openMessageLength + header.payloadLength
                openMessageFragments += 1
            case .close, .ping, .pong:
                break
            }
            return .payload(remaining: header.payloadLength, phase: 0)
        }
    }

    /// The wire size allowed for a compressed frame or message under `limit`. Deflate makes
    /// incompressible data larger (a 5-byte header per stored block, and a compressor with a
    /// small `memLevel` cuts blocks of 2 KiB or less), so a message that inflates to within
    /// the limit may be over it on the wire; the inflater enforces the limit on the inflated
    /// size itself. A sixteenth plus 1 KiB covers stored blocks down to 128 bytes and still
    /// bounds what a peer can make us read.
    static func compressedAllowance(for limit: Int) -> Int {
        let (allowance, overflow) = limit.addingReportingOverflow(limit / 16 + 1024)
        return overflow ? Int.max : allowance
    }
}
