// A connection's pending output: a FIFO of caller-owned chunks, gathered into one `sendmsg`.
import Glibc

/// Pending output of one connection.
///
/// Chunks are stored as the caller's arrays, never copied: one broadcast frame can sit in ten
/// thousand queues and exist once in memory. The `iovec`s handed to the kernel point into that
/// storage; this is sound because the queue keeps each array alive and never mutates it until
/// the bytes have been written and the chunk dropped.
struct WriteQueue {
    private var chunks: [[UInt8]] = []
    private var head = 0
    private var headOffset = 0
    private(set) var byteCount = 0

    var isEmpty: Bool { byteCount == 0 }

    mutating func append(_ chunk: [UInt8]) {
        precondition(!chunk.isEmpty, "empty chunks are filtered by the caller")
        chunks.append(chunk)
        byteCount += chunk.count
    }

    /// Queues what a direct write of `output` left: everything after its first `written` bytes.
    /// Only on an empty queue, the one place a direct write is tried.
    mutating func appendRemainder(of output: SharedOutput, afterWriting written: Int) {
        precondition(isEmpty && chunks.isEmpty, "internal inconsistency in WriteQueue: a direct write past queued output")
        precondition(written < output.byteCount, "internal inconsistency in WriteQueue: nothing remains of a direct write")
        var skipped = 0
        for chunk in output.chunks {
            if chunks.isEmpty {
                if skipped + chunk.count <= written {
                    skipped += chunk.count
                    continue
                }
                headOffset = written - skipped
            }
            chunks.append(chunk)
        }
        byteCount = output.byteCount - written
    }

    /// Fills up to `capacity` vectors from the front of the queue, limited to about
    /// `byteLimit` bytes; returns how many were filled.
    func fillVectors(_ vectors: UnsafeMutablePointer<iovec>, capacity: Int, byteLimit: Int) -> Int {
        var filled = 0
        var position = head
        var bytes = 0
        while position < chunks.count, filled < capacity, bytes < byteLimit {
            let offset = position == head ? headOffset : 0
            chunks[position].withUnsafeBufferPointer { buffer in
                let length = buffer.count - offset
                vectors[filled] = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress! + offset),
                                        iov_len: length)
                bytes += length
            }
            filled += 1
            position += 1
        }
        return filled
    }

    /// Drops `count` written bytes from the front.
    mutating func consume(_ count: Int) {
        precondition(count <= byteCount, "internal inconsistency in WriteQueue: wrote more than queued")
        byteCount -= count
        var remaining = count
        while remaining > 0 {
            let available = chunks[head].count - headOffset
            if remaining >= available {
                remaining -= available
                chunks[head] = []
                head += 1
                headOffset = 0
            } else {
                headOffset += remaining
                remaining = 0
            }
        }
        if head == chunks.count {
            // A small array is kept (a few dozen bytes): reallocating it for every message cost a
            // malloc and a free per fan-out recipient. A large one is released, so a connection
            // that once had a backlog does not hold its storage while idle.
            chunks.removeAll(keepingCapacity: chunks.capacity <= 4)
            head = 0
        } else if head >= 64, head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        chunks = []
        head = 0
        headOffset = 0
        byteCount = 0
    }
}
