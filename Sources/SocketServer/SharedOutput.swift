// Bytes that many connections send unchanged: one loop turn's broadcast frames for every
// subscriber with the same view. The `iovec`s for the gathered write are built once, when the output is
// made, instead of once per recipient; a connection with nothing queued writes them straight
// from here (`Connection.send(_: SharedOutput)`), so a recipient whose socket takes the bytes
// costs one system call and no queueing, copying or reference counting of the chunks.
import Glibc

/// Immutable chunks sent in order to many connections of one loop. Confined to the loop that
/// made it (its vectors are handed to the kernel from there).
public final class SharedOutput {
    /// The chunks, in order; kept alive (and never mutated) for as long as the vectors point
    /// into their storage.
    public let chunks: [[UInt8]]
    /// Sum of the chunks' lengths.
    public let byteCount: Int
    /// One vector per chunk, in order.
    let vectors: UnsafeMutablePointer<iovec>

    /// `chunks` must not be empty, nor hold an empty chunk.
    public init(chunks: [[UInt8]]) {
        precondition(!chunks.isEmpty, "shared output needs at least one chunk")
        self.chunks = chunks
        vectors = .allocate(capacity: chunks.count)
        var total = 0
        for (position, chunk) in self.chunks.enumerated() {
            precondition(!chunk.isEmpty, "empty chunks are filtered by the caller")
            // The array's storage is stable while `self.chunks` holds it unmodified (as for
            // WriteQueue's chunks).
            let base = chunk.withUnsafeBufferPointer { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
            vectors[position] = iovec(iov_base: base, iov_len: chunk.count)
            total += chunk.count
        }
        byteCount = total
    }

    deinit { vectors.deallocate() }

    var vectorCount: Int { chunks.count }
}
