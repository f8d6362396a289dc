import CZlib

/// Decompresses incoming messages as RFC 7692 §7.2.2 describes, piece by piece, with a hard
/// ceiling on the inflated size so a small "decompression bomb" fails after producing at most
/// `limit + 1` bytes instead of exhausting memory. Not thread-safe: confine it to the
/// connection's serial queue. See `MessageDeflater` for the memory policy.
public final class MessageInflater {
    /// LZ77 window in bits, 9...15 (a peer asked to use 8 really uses 9 with zlib).
    public let windowBits: Int
    /// Whether the peer may refer to earlier messages (no `*_no_context_takeover` for it).
    public let keepsContext: Bool

    private var stream: UnsafeMutablePointer<z_stream>?
    /// The peer ended the deflate stream (BFINAL) inside this message.
    private var reachedStreamEnd = false

    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    public init(windowBits: Int, keepsContext: Bool) {
        precondition((8...15).contains(windowBits), "window bits must be 8...15")
        self.windowBits = max(9, windowBits)
        self.keepsContext = keepsContext
    }

    deinit { releaseStream() }

    /// Whether a zlib stream is currently allocated (false between messages without context).
    public var holdsStream: Bool { stream != nil }

    /// Inflates the next piece of a compressed message's payload, appending to `output`.
    /// Throws `.messageTooLarge` as soon as `output` would grow past `limit` bytes.
    public func inflate(_ piece: UnsafeRawBufferPointer, appendingTo output: inout [UInt8],
                        limit: Int) throws(ProtocolViolation) {
        let stream = acquireStream()
        // A peer may end a message with a BFINAL block (RFC 7692 §7.2.3.4); whatever follows
        // it in the same message (padding, the flush tail) carries nothing and is skipped.
        if reachedStreamEnd { return }
        var remaining = piece
        repeat {
            let chunk = min(remaining.count, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: remaining.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(chunk)
            defer { stream.pointee.next_in = nil; stream.pointee.next_out = nil }
            while true {
                // Never offer zlib more room than the limit allows, plus one byte to detect
                // overflow: a bomb cannot make us allocate more than that.
                let allowance = limit - output.count + 1
                guard allowance > 0 else { throw .messageTooLarge(limit: limit) }
                let room = min(allowance, zlibOutputPage.count)
                let before = output.count
                output.append(contentsOf: zlibOutputPage[..<room])
                let result = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.pointee.next_out = buffer.baseAddress! + before
                    stream.pointee.avail_out = uInt(room)
                    return CZlib.inflate(stream, Z_SYNC_FLUSH)
                }
                let unused = Int(stream.pointee.avail_out)
                output.removeLast(unused)
                if output.count > limit { throw .messageTooLarge(limit: limit) }
                switch result {
                case Z_OK, Z_BUF_ERROR:
                    break
                case Z_STREAM_END:
                    reachedStreamEnd = true
                    return
                default:
                    throw .invalidCompressedData
                }
                if stream.pointee.avail_in == 0 && unused > 0 { break }
                if result == Z_BUF_ERROR && unused > 0 { throw .invalidCompressedData }
            }
            remaining = UnsafeRawBufferPointer(rebasing: remaining[chunk...])
        } while !remaining.isEmpty
    }

    /// Ends the message: feeds the 00 00 FF FF tail (§7.2.2), appends the final output, and
    /// releases the stream unless the peer keeps context.
    public func finishMessage(appendingTo output: inout [UInt8], limit: Int) throws(ProtocolViolation) {
        defer {
            if !keepsContext {
                releaseStream()
            } else if reachedStreamEnd, let stream {
                // BFINAL ended the peer's stream: its next message starts with a fresh window.
                inflateReset(stream)
            }
            reachedStreamEnd = false
        }
        if reachedStreamEnd { return }
        let outcome = Self.tail.withUnsafeBytes { tail in
            Result { () throws(ProtocolViolation) in try inflate(tail, appendingTo: &output, limit: limit) }
        }
        try outcome.get()
    }

    /// Abandons a message half way (the connection failed); frees the stream.
    public func abandonMessage() {
        releaseStream()
        reachedStreamEnd = false
    }

    /// Inflates one whole compressed message payload.
    public func inflateMessage(_ payload: [UInt8], limit: Int) throws(ProtocolViolation) -> [UInt8] {
        var output: [UInt8] = []
        do {
            let outcome = payload.withUnsafeBytes { bytes in
                Result { () throws(ProtocolViolation) in try inflate(bytes, appendingTo: &output, limit: limit) }
            }
            try outcome.get()
            try finishMessage(appendingTo: &output, limit: limit)
        } catch {
            abandonMessage()
            throw error
        }
        return output
    }

    private func acquireStream() -> UnsafeMutablePointer<z_stream> {
        if let stream { return stream }
        let fresh = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        fresh.initialize(to: z_stream())
        let result = bangbang_inflateInit2(fresh, -Int32(windowBits))
        guard result == Z_OK else {
            fatalError("internal inconsistency in MessageInflater: inflateInit2 returned \(result)")
        }
        stream = fresh
        return fresh
    }

    private func releaseStream() {
        guard let stream else { return }
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        self.stream = nil
    }
}
