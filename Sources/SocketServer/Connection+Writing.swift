// Connection's writing: the write queue's backlog and backpressure, the gathered writes and
// their end-of-block flush, write interest in the epoll set and the shutdown of the write side.
import Platform

extension Connection {
    // MARK: Writing

    func enqueue(_ chunk: [UInt8]) -> SendResult {
        // The limit is on the backlog already waiting, not on this chunk: one message larger
        // than the limit (a 16 MiB echo) still goes out to a peer that reads, while a peer that
        // stops reading is cut off once its backlog passes the limit. Memory per connection is
        // bounded by the limit plus the largest single send.
        if output.byteCount > options.outputLimit {
            tearDown(.outputLimitExceeded)
            return .dropped
        }
        appendOutput(chunk)
        if !isWaitingForWritable, !isCorked {
            if output.byteCount > options.highWaterMark {
                // Too much to hold for the end of the block: write now, so backpressure still
                // means the kernel refused more, not that we had not tried yet.
                flush(isWritableEvent: false)
            } else if !isFlushDeferred {
                isFlushDeferred = true
                loop.deferFlush(self)
            }
        }
        if state == .closed { return .dropped }
        if output.byteCount > options.highWaterMark {
            isAboveHighWater = true
            return .backpressure
        }
        return isAboveHighWater ? .backpressure : .enqueued
    }

    /// The loop's end-of-block write for a `deferFlush`. Runs on the loop.
    func flushDeferred() {
        isFlushDeferred = false
        // Not inside a `send`, so a drain may be reported from here.
        writeQueuedOutput(isWritableEvent: true)
    }

    /// Writes queued output unless nothing is queued, the socket is known to be full (writability
    /// will call back) or the connection is corked or gone.
    func writeQueuedOutput(isWritableEvent: Bool) {
        if state != .closed, !output.isEmpty, !isWaitingForWritable, !isCorked { flush(isWritableEvent: isWritableEvent) }
    }

    func appendOutput(_ chunk: [UInt8]) {
        output.append(chunk)
    }

    /// Writes as much as the kernel takes, up to the per-event cap.
    func flush(isWritableEvent: Bool) {
        var written = 0
        while !output.isEmpty {
            if written >= options.maxBytesWrittenPerEvent {
                waitForWritable()  // the socket is still writable, so this fires on the next round
                return
            }
            let vectorCount = output.fillVectors(loop.vectors, capacity: EventLoop.maxVectors,
                                                 byteLimit: options.maxBytesWrittenPerEvent - written)
            do {
                guard let count = try loop.syscalls.sendVectors(descriptor, loop.vectors, count: vectorCount) else {
                    waitForWritable()
                    return
                }
                output.consume(count)
                written += count
            } catch {
                tearDown(isCloseRequested ? .localClose : .ioError(error))
                return
            }
        }
        stopWaitingForWritable()
        if state == .flushing {
            shutDownOutput()
            return
        }
        // Drain is reported only from a writability event, never from inside `send`.
        if isWritableEvent { reportDrainIfNeeded() }
    }

    private func reportDrainIfNeeded() {
        if isAboveHighWater, state == .open, output.byteCount <= options.lowWaterMark {
            isAboveHighWater = false
            handler?.connectionDidDrain(self)
        }
    }

    func writable() {
        if state == .connecting {
            connectionEstablished()
            return
        }
        flush(isWritableEvent: true)
        if state == .open, isWaitingForWritable { reportDrainIfNeeded() }
    }

    func waitForWritable() {
        guard !isWaitingForWritable, state != .closed else { return }
        isWaitingForWritable = true
        updateReadiness()
    }

    func stopWaitingForWritable() {
        guard isWaitingForWritable else { return }
        isWaitingForWritable = false
        updateReadiness()
    }

    func shutDownOutput() {
        loop.syscalls.shutdownOutput(descriptor)
        state = .halfClosed
    }
}
