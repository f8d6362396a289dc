/// Writes RFC 6455 §5.2 frames into caller-supplied buffers.
///
/// Nothing here allocates per frame: headers and payloads are appended to a `[UInt8]` the caller
/// owns and reuses (a connection's outbound buffer), and client payloads are masked in place
/// after they are appended. Messages always go out as single frames; we never fragment what we
/// send because every message we send is already whole in memory.
public enum FrameEncoder {
    /// The largest header: 2 fixed bytes, 8 bytes of length, 4 of masking key.
    public static let maxHeaderSize = 14

    /// Bytes the header of a frame with this payload length takes.
    @inlinable
    public static func headerSize(payloadLength: Int, isMasked: Bool) -> Int {
        let lengthBytes = payloadLength <= 125 ? 0 : payloadLength <= 0xFFFF ? 2 : 8
        return 2 + lengthBytes + (isMasked ? 4 : 0)
    }

    /// Appends a frame header. Lengths use the minimal encoding (RFC 6455 §5.2).
    @inlinable
    public static func appendHeader(opcode: Opcode, isFinal: Bool = true, isCompressed: Bool = false,
                                    payloadLength: Int, maskingKey: MaskingKey?,
                                    to buffer: inout [UInt8]) {
        precondition(payloadLength >= 0, "negative payload length")
        precondition(!opcode.isControl || (isFinal && payloadLength <= 125 && !isCompressed),
                     "control frames are final, uncompressed and at most 125 bytes (RFC 6455 §5.5)")
        buffer.append((isFinal ? 0x80 : 0) | (isCompressed ? 0x40 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        if payloadLength <= 125 {
            buffer.append(maskBit | UInt8(payloadLength))
        } else if payloadLength <= 0xFFFF {
            buffer.append(maskBit | 126)
            buffer.append(UInt8(truncatingIfNeeded: payloadLength >> 8))
            buffer.append(UInt8(truncatingIfNeeded: payloadLength))
        } else {
            buffer.append(maskBit | 127)
            var shift = 56
            while shift >= 0 {
                buffer.append(UInt8(truncatingIfNeeded: payloadLength >> shift))
                shift -= 8
            }
        }
        if let key = maskingKey {
            buffer.append(key[0]); buffer.append(key[1]); buffer.append(key[2]); buffer.append(key[3])
        }
    }

    /// Appends a whole frame, masking the payload in place when a key is given.
    @inlinable
    public static func appendFrame(opcode: Opcode, isFinal: Bool = true, isCompressed: Bool = false,
                                   payload: UnsafeRawBufferPointer, maskingKey: MaskingKey?,
                                   to buffer: inout [UInt8]) {
        appendHeader(opcode: opcode, isFinal: isFinal, isCompressed: isCompressed,
                     payloadLength: payload.count, maskingKey: maskingKey, to: &buffer)
        let start = buffer.count
        buffer.append(contentsOf: payload)
        if let key = maskingKey {
            key.apply(to: &buffer, range: start..<buffer.count, phase: 0)
        }
    }

    /// Appends a whole frame as `role` sends it: clients mask with a fresh key from `generator`
    /// (RFC 6455 §5.3), servers never mask.
    @inlinable
    public static func appendFrame(opcode: Opcode, isFinal: Bool = true, isCompressed: Bool = false,
                                   payload: UnsafeRawBufferPointer, role: Role,
                                   to buffer: inout [UInt8],
                                   using generator: inout some RandomNumberGenerator) {
        let key: MaskingKey? = role == .client ? .random(using: &generator) : nil
        appendFrame(opcode: opcode, isFinal: isFinal, isCompressed: isCompressed, payload: payload,
                    maskingKey: key, to: &buffer)
    }

    /// Encodes one server message once, as an immutable frame that can be written unchanged to
    /// every connection (broadcast: encode once, share it).
    ///
    /// Server frames are unmasked, so the bytes do not depend on the connection. With
    /// `compressedWith` the payload is deflated as an independent stream (a fresh compressor,
    /// no shared context) using `serverMaxWindowBits`; because our server never uses context
    /// takeover (see `MessageDeflater`), the frame is valid on every connection that negotiated
    /// permessage-deflate with a server window at least that large. Connections without
    /// permessage-deflate need the uncompressed variant: make both when subscribers are mixed.
    public static func makeServerFrame(opcode: Opcode, payload: UnsafeRawBufferPointer,
                                       compressedWith deflate: DeflateParameters?) -> [UInt8] {
        precondition(opcode == .text || opcode == .binary || opcode.isControl,
                     "a shared frame carries a whole message")
        guard let deflate, !opcode.isControl else {
            var frame: [UInt8] = []
            frame.reserveCapacity(headerSize(payloadLength: payload.count, isMasked: false) + payload.count)
            appendFrame(opcode: opcode, payload: payload, maskingKey: nil, to: &frame)
            return frame
        }
        let deflater = MessageDeflater(windowBits: deflate.serverMaxWindowBits, keepsContext: false)
        var compressed: [UInt8] = []
        deflater.compress(payload, appendingTo: &compressed)
        var frame: [UInt8] = []
        frame.reserveCapacity(headerSize(payloadLength: compressed.count, isMasked: false) + compressed.count)
        compressed.withUnsafeBytes { bytes in
            appendFrame(opcode: opcode, isCompressed: true, payload: bytes, maskingKey: nil, to: &frame)
        }
        return frame
    }

    /// Convenience for `makeServerFrame(opcode:payload:compressedWith:)` over an array.
    public static func makeServerFrame(opcode: Opcode, payload: [UInt8],
                                       compressedWith deflate: DeflateParameters?) -> [UInt8] {
        payload.withUnsafeBytes { makeServerFrame(opcode: opcode, payload: $0, compressedWith: deflate) }
    }
}
