// A connection's pending output: a FIFO of caller-owned chunks, gathered into one `sendmsg`.
//
// Memory. Most connections are idle with nothing queued, and a busy one usually queues a single
// chunk that the end of the block writes whole. So the queue keeps its first chunk inline and
// everything else (more chunks behind it, or how much of it a short write already took) in a
// backlog object that exists only while there is such a thing to keep: an idle connection
// holds two empty words and no storage, and a queue of one chunk costs no allocation of its own.
import Glibc

/// Pending output of one connection.
///
/// Chunks are stored as the caller's arrays, never copied: one broadcast frame can sit in ten
/// thousand queues and exist once in memory. The `iovec`s handed to the kernel point into that
/// storage; this is sound because the queue keeps each array alive and never mutates it until
/// the bytes have been written and the chunk dropped.
struct WriteQueue {
    /// The oldest chunk (its unwritten part starts at `backlog.frontOffset`); empty exactly when
    /// nothing is queued.
    private var front: [UInt8] = []
    /// Present while more than `front` is queued or part of `front` has been written.
    private var backlog: WriteBacklog?

    /// Bytes queued and not yet written.
    var byteCount: Int {
        guard let backlog else { return front.count }
        return front.count - backlog.frontOffset + backlog.chunkBytes
    }

    var isEmpty: Bool { front.isEmpty }

    /// Whether the queue holds storage beyond its first chunk (for tests: an idle queue holds none).
    var hasBacklog: Bool { backlog != nil }

    mutating func append(_ chunk: [UInt8]) {
        precondition(!chunk.isEmpty, "empty chunks are filtered by the caller")
        if front.isEmpty {
            front = chunk
            return
        }
        let backlog = self.backlog ?? makeBacklog()
        backlog.chunks.append(chunk)
        backlog.chunkBytes += chunk.count
    }

    /// Queues what a direct write of `output` left: everything after its first `written` bytes.
    /// Only on an empty queue, the one place a direct write is tried.
    mutating func appendRemainder(of output: SharedOutput, afterWriting written: Int) {
        precondition(isEmpty && backlog == nil, "internal inconsistency in WriteQueue: a direct write past queued output")
        precondition(written < output.byteCount, "internal inconsistency in WriteQueue: nothing remains of a direct write")
        var skipped = 0
        for chunk in output.chunks {
            if front.isEmpty {
                if skipped + chunk.count <= written {
                    skipped += chunk.count
                    continue
                }
                front = chunk
                if written > skipped { makeBacklog().frontOffset = written - skipped }
                continue
            }
            append(chunk)
        }
    }

    /// Fills up to `capacity` vectors from the front of the queue, limited to about
    /// `byteLimit` bytes; returns how many were filled.
    func fillVectors(_ vectors: UnsafeMutablePointer<iovec>, capacity: Int, byteLimit: Int) -> Int {
        guard !front.isEmpty, capacity > 0 else { return 0 }
        let offset = backlog?.frontOffset ?? 0
        var bytes = 0
        front.withUnsafeBufferPointer { buffer in
            vectors[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress! + offset),
                               iov_len: buffer.count - offset)
            bytes = buffer.count - offset
        }
        guard let backlog else { return 1 }
        var filled = 1
        var position = backlog.head
        while position < backlog.chunks.count, filled < capacity, bytes < byteLimit {
            backlog.chunks[position].withUnsafeBufferPointer { buffer in
                vectors[filled] = iovec(iov_base: UnsafeMutableRawPointer(mutating: buffer.baseAddress!),
                                        iov_len: buffer.count)
                bytes += buffer.count
            }
            filled += 1
            position += 1
        }
        return filled
    }

    /// Drops `count` written bytes from the front.
    mutating func consume(_ count: Int) {
        precondition(count <= byteCount, "internal inconsistency in WriteQueue: wrote more than queued")
        var remaining = count
        while remaining > 0 {
            let offset = backlog?.frontOffset ?? 0
            let available = front.count - offset
            if remaining < available {
                (backlog ?? makeBacklog()).frontOffset = offset + remaining
                return
            }
            remaining -= available
            advanceFront()
        }
    }

    mutating func removeAll() {
        front = []
        backlog = nil
    }

    /// `front` is written: the next chunk takes its place, and the backlog goes once it is empty.
    private mutating func advanceFront() {
        guard let backlog, backlog.head < backlog.chunks.count else {
            front = []
            backlog = nil
            return
        }
        front = backlog.chunks[backlog.head]
        backlog.chunks[backlog.head] = []
        backlog.head += 1
        backlog.frontOffset = 0
        backlog.chunkBytes -= front.count
        if backlog.head == backlog.chunks.count {
            // Only the new front is left: nothing beyond it to keep.
            self.backlog = nil
        } else if backlog.head >= 64, backlog.head * 2 >= backlog.chunks.count {
            backlog.chunks.removeFirst(backlog.head)
            backlog.head = 0
        }
    }

    private mutating func makeBacklog() -> WriteBacklog {
        let made = WriteBacklog()
        backlog = made
        return made
    }
}

/// What a `WriteQueue` holds beyond its first chunk. Owned by one queue, so confined to that
/// queue's connection's loop.
final class WriteBacklog {
    /// Bytes of the queue's front chunk already written.
    var frontOffset = 0
    /// The chunks behind the front one, from `head` on.
    var chunks: [[UInt8]] = []
    var head = 0
    /// Sum of the lengths of `chunks[head...]`.
    var chunkBytes = 0
}
