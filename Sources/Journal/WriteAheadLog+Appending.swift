// WriteAheadLog's appending and group commit: `append`, the writer that drains the pending
// batch, the segment writes and rolls, preallocation and the `.interval` syncs.
import Crypto
import Dispatch
import Platform
import Synchronization

extension WriteAheadLog {
    // MARK: Appending

    /// Appends a record and returns its sequence at once; `completion` follows, on the journal's
    /// queue (or `configuration.completionQueue`), once the record is durable under the sync policy (`.success(sequence)`) or its batch
    /// failed (`.failure`, and the record is not in the journal). Sequences are strictly increasing
    /// in call order: a caller that appends from one serial context decides the order itself.
    /// After `close()` the completion gets `.failure(.closed)` immediately and 0 is returned (no
    /// record ever has sequence 0).
    @discardableResult
    public func append(_ payload: [UInt8],
                       completion: @escaping @Sendable (Result<UInt64, JournalError>) -> Void) -> UInt64 {
        precondition(payload.count <= configuration.maximumRecordSize,
                     "journal record of \(payload.count) bytes exceeds maximumRecordSize \(configuration.maximumRecordSize)")
        let payloadChecksum = payload.withUnsafeBytes { Digest.crc32($0) }
        let accepted: (sequence: UInt64, schedulesDrain: Bool)? = intake.withLock { intake in
            guard !intake.isClosed else { return nil }
            let sequence = intake.nextSequence
            intake.nextSequence += 1
            let checksum = RecordFormat.checksum(sequence: sequence, payloadChecksum: payloadChecksum, payloadLength: payload.count)
            RecordFormat.append(sequence: sequence, payload: payload, checksum: checksum, to: &intake.buffer)
            intake.waiters.append(Waiter(sequence: sequence, completion: completion))
            let schedulesDrain = !intake.isDrainScheduled
            intake.isDrainScheduled = true
            return (sequence, schedulesDrain)
        }
        guard let accepted else {
            completion(.failure(.closed))
            return 0
        }
        if accepted.schedulesDrain { startWriter() }
        return accepted.sequence
    }

    /// Schedules `drain` on the journal's queue, through `writerStartQueue` when there is one.
    private func startWriter() {
        if let startQueue = configuration.writerStartQueue {
            startQueue.async { self.queue.async { self.drain() } }
        } else {
            queue.async { self.drain() }
        }
    }

    /// Writes batches until nothing is pending. Runs on `queue`. With a `writerStartQueue` it
    /// writes one batch and, if more is pending, starts again from that queue, so the next batch
    /// holds everything its blocks appended meanwhile (fewer, fuller fdatasyncs on a busy core);
    /// `untilEmpty` (closing) writes everything at once.
    func drain(untilEmpty: Bool = false) {
        while true {
            let batch: (bytes: [UInt8], waiters: [Waiter])? = intake.withLock { intake in
                guard !intake.waiters.isEmpty else {
                    intake.isDrainScheduled = false
                    return nil
                }
                var bytes = intake.spareBuffer
                var waiters = intake.spareWaiters
                intake.spareBuffer = []
                intake.spareWaiters = []
                swap(&bytes, &intake.buffer)
                swap(&waiters, &intake.waiters)
                return (bytes, waiters)
            }
            guard var batch else { return }
            let started = ContinuousClock.now
            let result = commit(batch.bytes, firstSequence: batch.waiters[0].sequence)
            if let observer = configuration.batchObserver, case .success = result {
                let elapsed = (ContinuousClock.now - started).components
                observer(batch.waiters.count, Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
            }
            if let completionQueue = configuration.completionQueue {
                let waiters = batch.waiters
                completionQueue.async { Self.complete(waiters, with: result) }
                batch.waiters = []
            } else {
                Self.complete(batch.waiters, with: result)
                batch.waiters.removeAll(keepingCapacity: true)
            }
            batch.bytes.removeAll(keepingCapacity: true)
            let writesOneBatch = configuration.writerStartQueue != nil && !untilEmpty
            let restartsLater = intake.withLock { intake -> Bool in
                intake.spareBuffer = batch.bytes
                intake.spareWaiters = batch.waiters
                guard writesOneBatch else { return false }
                // The drain stays scheduled (appends do not start another) while pending work waits.
                if intake.waiters.isEmpty { intake.isDrainScheduled = false }
                return !intake.waiters.isEmpty
            }
            if writesOneBatch {
                if restartsLater { startWriter() }
                return
            }
        }
    }

    private static func complete(_ waiters: [Waiter], with result: Result<Void, JournalError>) {
        for waiter in waiters {
            waiter.completion(result.map { waiter.sequence })
        }
    }

    /// One batch: roll if due, one write, one fdatasync under `.always`. On failure the segment is
    /// cut back to the previous good offset before the batch's appends are failed.
    private func commit(_ bytes: [UInt8], firstSequence: UInt64) -> Result<Void, JournalError> {
        let result: Result<Void, JournalError> = writer.withLock { state in
            if let failure = state.stuckError { return .failure(failure) }
            if state.isClosed { return .failure(.closed) }
            if let failure = state.heldError { return .failure(failure) }
            if (state.offset >= configuration.segmentSize || state.rollsBeforeNextBatch) && state.offset > SegmentHeader.size {
                if case .failure(let error) = roll(&state, base: firstSequence) {
                    if configuration.holdsAfterFailure { state.heldError = error }
                    return .failure(error)
                }
            }
            state.rollsBeforeNextBatch = false
            let start = state.offset
            preallocate(&state, through: start + bytes.count)
            do throws(Errno) {
                try syscalls.writeAll(state.descriptor, bytes, at: start)
                if configuration.syncPolicy == .always {
                    try syscalls.dataSync(state.descriptor)
                }
            } catch {
                let failure = JournalError(error, path: nil)
                state.zeroedEnd = start
                do throws(Errno) {
                    try syscalls.truncate(state.descriptor, toLength: start)
                } catch {
                    state.stuckError = JournalError(error, path: nil)
                }
                if configuration.holdsAfterFailure { state.heldError = failure }
                return .failure(failure)
            }
            state.offset = start + bytes.count
            switch configuration.syncPolicy {
            case .always:
                break
            case .interval(let milliseconds):
                state.isDirty = true
                if !state.isSyncScheduled {
                    state.isSyncScheduled = true
                    queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { self.backgroundSync() }
                }
            case .never:
                state.isDirty = true
            }
            return .success(())
        }
        counters.withLock { counters in
            counters.batches += 1
            switch result {
            case .success:
                counters.bytesWritten += bytes.count
                if configuration.syncPolicy == .always { counters.syncs += 1 }
            case .failure:
                counters.failedBatches += 1
            }
        }
        return result
    }

    private static let zeros = [UInt8](repeating: 0, count: 256 << 10)

    /// Zero-fills the active segment in `preallocationSize` chunks until it reaches `end`. The
    /// batch's own fdatasync makes the zeros and the new size durable together. Only an
    /// optimisation: when filling fails (no room for a whole chunk), the zeros are cut off again
    /// and the segment is appended to plainly until the next one.
    private func preallocate(_ state: inout WriterState, through end: Int) {
        let chunk = configuration.preallocationSize
        guard chunk > 0, !state.isPreallocationSuspended, end > state.zeroedEnd else { return }
        var position = max(state.zeroedEnd, state.offset)
        let target = (end / chunk + 1) * chunk
        let descriptor = state.descriptor
        do throws(Errno) {
            while position < target {
                let count = min(Self.zeros.count, target - position)
                let result: Result<Void, Errno> = Self.zeros.withUnsafeBytes { zeros in
                    Result { () throws(Errno) in
                        try syscalls.writeAll(descriptor, UnsafeRawBufferPointer(rebasing: zeros[0..<count]), at: position)
                    }
                }
                try result.get()
                position += count
            }
            state.zeroedEnd = target
        } catch {
            state.isPreallocationSuspended = true
            try? syscalls.truncate(descriptor, toLength: state.offset)
            state.zeroedEnd = state.offset
        }
    }

    /// Starts a new segment whose base is the first sequence of the batch about to be written.
    private func roll(_ state: inout WriterState, base: UInt64) -> Result<Void, JournalError> {
        if state.zeroedEnd > state.offset {
            // A finished segment holds its records only, exactly as without preallocation (so an
            // older server can still read it); the sync below makes the new size durable.
            do { try syscalls.truncate(state.descriptor, toLength: state.offset) } catch { return .failure(JournalError(error, path: nil)) }
            state.zeroedEnd = state.offset
            state.isDirty = true
        }
        if state.isDirty {
            // The old segment must be complete on disk before the new one exists, or a crash could
            // leave a torn tail in a segment that is no longer the last.
            do { try syscalls.dataSync(state.descriptor) } catch { return .failure(JournalError(error, path: nil)) }
            state.isDirty = false
            counters.withLock { $0.syncs += 1 }
        }
        let descriptor: Int32
        do {
            descriptor = try dataDirectory.createSegment(base: base)
        } catch {
            return .failure(error)
        }
        syscalls.close(state.descriptor)
        state.descriptor = descriptor
        state.segments.append(SegmentFile(base: base, name: DataDirectory.segmentName(base: base)))
        state.offset = SegmentHeader.size
        state.zeroedEnd = SegmentHeader.size
        state.isPreallocationSuspended = false
        counters.withLock { $0.segmentsCreated += 1 }
        return .success(())
    }

    /// The `.interval` policy's deferred fdatasync. Runs on `queue`. A failure leaves the data dirty
    /// so the next interval (or close) tries again; it is counted in `statistics.failedSyncs`.
    private func backgroundSync() {
        writer.withLock { state in
            state.isSyncScheduled = false
            guard state.isDirty, !state.isClosed else { return }
            do throws(Errno) {
                try syscalls.dataSync(state.descriptor)
                state.isDirty = false
                counters.withLock { $0.syncs += 1 }
            } catch {
                counters.withLock { $0.failedSyncs += 1 }
            }
        }
    }
}
