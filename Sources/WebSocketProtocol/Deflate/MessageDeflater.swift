// permessage-deflate codec (RFC 7692 §7.2).
//
// Theory of operation. Each compressed message is raw DEFLATE data (no zlib header) produced
// with a sync flush, minus the 00 00 FF FF that the flush always ends with (§7.2.1); the
// receiver appends those four bytes back before inflating (§7.2.2).
//
// Memory: a zlib deflate stream costs 2^(windowBits+2) + 2^(memLevel+9) bytes (256 KiB at
// 15/8), an inflate stream about 2^windowBits (32 KiB at 15). Thousands of idle connections
// must not hold that, so streams are created lazily when a message starts and released when
// it ends unless context takeover requires keeping the LZ77 window between messages. An idle
// connection without context takeover therefore holds no zlib memory at all.
//
// The server never keeps compression context, even when the client allows it: every message
// it sends is an independent deflate stream. That costs a little ratio on small messages, but
// it makes a compressed frame independent of the connection, so a broadcast is compressed once
// and the same bytes go to every subscriber (see `FrameEncoder.makeServerFrame`). Only a client
// deflater keeps context, and only when client_no_context_takeover was not agreed.
//
// zlib rejects a raw window of 8 bits and silently writes 9-bit windows when asked for 8
// (zlib manual, deflateInit2), so windows are raised to 9 on both sides: a 9-bit inflater
// reads everything a peer compressing "with 8" actually produces.

import CZlib

/// Output space is offered to zlib in steps of at most this many bytes; growing the array by
/// copying from a zero page is a plain memory copy, unlike appending repeated elements.
let zlibOutputPage = [UInt8](repeating: 0, count: 64 * 1024)

/// Compresses outgoing messages as RFC 7692 §7.2.1 describes. Not thread-safe: confine it to
/// the connection's serial queue, like the connection that owns it.
public final class MessageDeflater {
    /// memLevel 8 is zlib's default: the hash table (2^(memLevel+9) bytes) is the same size as a
    /// 15-bit window, which keeps compression fast. Lower levels save at most 128 KiB per live
    /// stream, and our streams live only for the duration of one `compress` call on servers.
    public static let memoryLevel: Int32 = 8

    /// LZ77 window in bits, 9...15.
    public let windowBits: Int
    /// Whether the LZ77 window carries over to the next message (context takeover).
    public let keepsContext: Bool
    /// zlib compression level; 6 (zlib's default) balances CPU and ratio for JSON-sized text.
    public let level: Int32

    private var stream: UnsafeMutablePointer<z_stream>?

    /// - Parameters:
    ///   - windowBits: the negotiated window for this side's compressor (8...15; 8 is raised to 9).
    ///   - keepsContext: keep the stream between messages; pass false when
    ///     `*_no_context_takeover` applies to this compressor, and always false on servers.
    public init(windowBits: Int, keepsContext: Bool, level: Int32 = 6) {
        precondition((8...15).contains(windowBits), "window bits must be 8...15")
        precondition((0...9).contains(level), "zlib level must be 0...9")
        self.windowBits = max(9, windowBits)
        self.keepsContext = keepsContext
        self.level = level
    }

    deinit { releaseStream() }

    /// Whether a zlib stream is currently allocated (false between messages without context).
    public var holdsStream: Bool { stream != nil }

    /// Compresses one whole message and appends the RFC 7692 payload to `output`. An empty
    /// message becomes the single byte 0x00 (an empty stored block, §7.2.3.6).
    public func compress(_ message: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        let stream = acquireStream()
        let start = output.count
        var remaining = message
        repeat {
            let chunk = min(remaining.count, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: remaining.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(chunk)
            let isLastChunk = chunk == remaining.count
            // A sync flush on the last chunk only: it ends on a byte boundary with 00 00 FF FF.
            let flush = isLastChunk ? Z_SYNC_FLUSH : Z_NO_FLUSH
            while true {
                // Typical messages compress to well under half; the loop grows for the rest, in
                // steps bounded so incompressible input does not over-reserve.
                let room = min(64 * 1024, Int(stream.pointee.avail_in) / 2 + 64)
                let before = output.count
                output.append(contentsOf: zlibOutputPage[..<room])
                let result = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.pointee.next_out = buffer.baseAddress! + before
                    stream.pointee.avail_out = uInt(room)
                    return deflate(stream, flush)
                }
                let unused = Int(stream.pointee.avail_out)
                output.removeLast(unused)
                // Z_BUF_ERROR only means "nothing to do" (e.g. a second empty flush in a row).
                guard result == Z_OK || result == Z_BUF_ERROR else {
                    fatalError("internal inconsistency in MessageDeflater: deflate returned \(result)")
                }
                if unused > 0 && stream.pointee.avail_in == 0 { break }
            }
            remaining = UnsafeRawBufferPointer(rebasing: remaining[chunk...])
        } while !remaining.isEmpty
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        if output.count - start >= 4 && output[(output.count - 4)...].elementsEqual([0x00, 0x00, 0xFF, 0xFF]) {
            output.removeLast(4)
        }
        if output.count == start { output.append(0x00) }
        if !keepsContext { releaseStream() }
    }

    /// Compresses an array; see `compress(_:appendingTo:)`.
    public func compress(_ message: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        message.withUnsafeBytes { compress($0, appendingTo: &output) }
        return output
    }

    private func acquireStream() -> UnsafeMutablePointer<z_stream> {
        if let stream { return stream }
        let fresh = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        fresh.initialize(to: z_stream())
        let result = bangbang_deflateInit2(fresh, level, Z_DEFLATED, -Int32(windowBits),
                                           Self.memoryLevel, Z_DEFAULT_STRATEGY)
        guard result == Z_OK else {
            // Only memory exhaustion can fail here: the parameters were validated above.
            fatalError("internal inconsistency in MessageDeflater: deflateInit2 returned \(result)")
        }
        stream = fresh
        return fresh
    }

    private func releaseStream() {
        guard let stream else { return }
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        self.stream = nil
    }
}
