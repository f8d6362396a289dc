// WriteAheadLog: a write-ahead log of opaque byte records, group commit, snapshots, crash recovery.
//
// THEORY OF OPERATION
//
// The journal knows nothing about the application: a record is a payload of bytes plus a sequence
// number the journal assigns. The server encodes its events into payloads, appends them, and acts
// on an event (acks a user, broadcasts) only from the append's completion: durability before
// visibility.
//
// Appending and group commit. `append` may be called from any thread. Under one short lock it takes
// the next sequence, encodes the record into the pending buffer and queues the completion, so the
// order of the buffer is the order of the sequences, and a caller that appends from its own serial
// queue gets its own order. The first append into an empty buffer schedules the writer on the
// journal's serial queue. The writer takes *everything* pending, does one pwrite and (under
// `.always`) one fdatasync for it, then calls the completions in sequence order on the journal's
// queue, or hands them in one block to the configured completion queue. While it waits on the disk, new appends pile up and become the next batch: the busier the
// server, the bigger the batches, and fsyncs stay far fewer than appends.
//
// What is durable when:
//   .always          completion(.success) after fdatasync returned: survives power loss.
//   .interval(ms)    completion after the write: survives a process crash (the page cache holds
//                    the bytes); an fdatasync follows within `ms`, so a power cut loses at most the
//                    acknowledged records of about that window.
//   .never           completion after the write; fdatasync only at close. Tests and benchmarks.
// A failed write or fsync fails every append of the batch with `.noSpace` or `.io(errno)`, and the
// segment is truncated back to the end of the last good batch, so a failed record never reappears
// after a crash; the sequences of a failed batch are skipped, not reused. The next batch starts from
// the good offset: once space returns, appends succeed again. If even the truncation fails the
// journal stops accepting appends (every later one fails with `.io`), because the file would hold
// bytes that were reported as not written.
//
// Files (all integers little-endian; see DataDirectory for names):
//   segment   "BBJL" | version u32 | base sequence u64 | records... | zeros (preallocation)
//   record    length u32 | crc32(sequence + payload) u32 | sequence u64 | payload
//   snapshot  "BBSN" | version u16 | flags u16 | covered u64 | stored length u64 |
//             original length u64 | crc32 u32 | stored bytes (zlib when flag bit 0)
// A segment is rolled (new file named by the next sequence, its header fsynced, the directory
// fsynced) before a batch when the current one has reached `segmentSize`; the old segment is synced
// first, so only the last segment can ever have a torn tail. With `preallocationSize`, the writer
// keeps the active segment zero-filled ahead of its records, a chunk at a time, so a batch's
// fdatasync overwrites blocks that exist and flushes data only; a run of zeros from a record
// boundary to the end of a file is where the records end (no record is all zeros: its sequence
// is not), and the next batch overwrites it.
//
// Snapshots (WriteAheadLog+Snapshot.swift): the caller builds the bytes from a consistent cut and names
// the last sequence they include. They are written to a temp file, fsynced, renamed into place and
// the directory fsynced. The two newest snapshots are kept, and the segments needed to replay after
// the *older* of the two, so a damaged newest snapshot can fall back to the previous one. Segments
// wholly covered by the previous snapshot (and by the caller's `keepingRecordsAfter` bound: the
// server's order archive) are deleted; the active segment never is.
//
// Recovery (Recovery.swift) runs in `open`: newest usable snapshot (damaged ones are renamed
// `.corrupt` with a warning), then the records after it. Damage at the very end of the last
// segment is a torn write: truncated, reported. Damage anywhere else, or damage followed by an
// intact record, means acknowledged data may be behind it: the journal refuses to open and says how
// to proceed. Other format versions are refused.
//
// Threads: `append` from anywhere; completions on the journal's queue or the configured completion
// queue (keep them short, and never call `close()` from one); `writeSnapshot` from any thread except the journal's queue; `close()`
// once, from any thread except the journal's queue. The data directory's `LOCK` (flock) keeps a
// second server out.
import Crypto
import Dispatch
import Foundation
import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public final class WriteAheadLog: Sendable {
    /// The directory holding segments, snapshots and the lock.
    public let directory: String
    public let configuration: JournalConfiguration

    let dataDirectory: DataDirectory
    var syscalls: Syscalls { dataDirectory.syscalls }
    /// Serial: the writer, the interval syncs and the completions run here.
    let queue: DispatchQueue
    let intake: Mutex<Intake>
    let writer: Mutex<WriterState>
    let snapshotCatalog: Mutex<[UInt64]>
    let counters: Mutex<JournalStatistics>
    private let lockDescriptor: Int32

    /// Appends not yet taken by the writer. Locked by every `append`, so it only holds what must be
    /// ordered with the sequence; checksumming the payload happens before the lock.
    struct Intake {
        var nextSequence: UInt64
        var buffer: [UInt8] = []
        var waiters: [Waiter] = []
        var spareBuffer: [UInt8] = []
        var spareWaiters: [Waiter] = []
        var isDrainScheduled = false
        var isClosed = false
    }

    struct Waiter {
        var sequence: UInt64
        var completion: @Sendable (Result<UInt64, JournalError>) -> Void
    }

    /// The active segment and the files on disk. Used by the writer on `queue`, and briefly by
    /// snapshots when they delete covered segments.
    struct WriterState {
        var descriptor: Int32
        var segments: [SegmentFile]
        /// End of the last good batch in the active segment: the next write goes here, and a failed
        /// batch is truncated back to it.
        var offset: Int
        /// The active segment is zero-filled up to here (`preallocationSize`); at least `offset`.
        var zeroedEnd = 0
        /// Zero-filling failed (a nearly full disk): plain appends until the next segment.
        var isPreallocationSuspended = false
        /// Written but not yet fdatasync'ed (`.interval` and `.never`).
        var isDirty = false
        var isSyncScheduled = false
        /// Set when a failed batch could not be truncated away; the journal is then read-only.
        var stuckError: JournalError?
        /// Under `holdsAfterFailure`, the failure every batch gets until `resumeAfterFailure()`.
        var heldError: JournalError?
        var isClosed = false
        /// Set by a snapshot cut: the next batch starts a new segment, so the segments before the
        /// cut become deletable once a later snapshot makes this one the fallback. Without it a
        /// segment smaller than `segmentSize` would outlive every snapshot.
        var rollsBeforeNextBatch = false
    }

    // MARK: Opening

    /// Whether `directory` holds a journal segment or a snapshot: the state of a server that ran
    /// on its own there. Nothing is opened or locked.
    public static func holdsJournal(in directory: String) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
        return names.contains { name in
            DataDirectory.sequence(in: name, prefix: DataDirectory.segmentPrefix, suffix: DataDirectory.segmentSuffix) != nil
                || DataDirectory.sequence(in: name, prefix: DataDirectory.snapshotPrefix, suffix: DataDirectory.snapshotSuffix) != nil
        }
    }

    /// Opens (creating if needed) the journal in `directory`, locks it and recovers its contents.
    /// Call the server's replay with `recovery.snapshot` and then `recovery.records`, log
    /// `recovery.report.warnings`, and only then start appending.
    public static func open(directory: String, configuration: JournalConfiguration = JournalConfiguration())
        throws(JournalError) -> (journal: WriteAheadLog, recovery: Recovery)
    {
        let dataDirectory = DataDirectory(path: directory, syscalls: configuration.syscalls)
        try dataDirectory.prepare()
        let lockDescriptor = try dataDirectory.lock()
        do throws(JournalError) {
            let outcome = try RecoveryProcedure(directory: dataDirectory, configuration: configuration).run()
            var segments = outcome.segments
            let descriptor: Int32
            let offset: Int
            if let active = segments.last, let length = outcome.activeLength {
                do {
                    descriptor = try configuration.syscalls.openFile(dataDirectory.file(active.name), flags: O_WRONLY)
                } catch {
                    throw JournalError(error, path: dataDirectory.file(active.name))
                }
                offset = length
            } else {
                descriptor = try dataDirectory.createSegment(base: outcome.nextSequence)
                segments = [SegmentFile(base: outcome.nextSequence, name: DataDirectory.segmentName(base: outcome.nextSequence))]
                offset = SegmentHeader.size
            }
            let journal = WriteAheadLog(dataDirectory: dataDirectory, configuration: configuration, lockDescriptor: lockDescriptor,
                                  writer: WriterState(descriptor: descriptor, segments: segments, offset: offset),
                                  nextSequence: outcome.nextSequence, snapshots: outcome.snapshots)
            return (journal, outcome.recovery)
        } catch {
            configuration.syscalls.close(lockDescriptor)
            throw error
        }
    }

    private init(dataDirectory: DataDirectory, configuration: JournalConfiguration, lockDescriptor: Int32,
                 writer: WriterState, nextSequence: UInt64, snapshots: [UInt64]) {
        self.directory = dataDirectory.path
        self.dataDirectory = dataDirectory
        self.configuration = configuration
        self.lockDescriptor = lockDescriptor
        self.queue = DispatchQueue(label: "bangbang.journal.writer")
        self.intake = Mutex(Intake(nextSequence: nextSequence))
        self.writer = Mutex(writer)
        self.snapshotCatalog = Mutex(snapshots)
        self.counters = Mutex(JournalStatistics())
    }

    /// A journal dropped without `close()` (a test, a failed startup) still releases its
    /// descriptors and the directory lock; nothing is flushed, as after a crash. Pending work keeps
    /// the journal alive, so this never runs with a batch in flight.
    deinit {
        writer.withLock { state in
            if !state.isClosed {
                syscalls.close(state.descriptor)
                state.isClosed = true
                syscalls.close(lockDescriptor)
            }
        }
    }

    // MARK: Holding after a failure

    /// Under `holdsAfterFailure`: lets batches be written again after a failure. Call once the
    /// caller has dropped whatever depended on the failed appends. Appends already failed stay failed.
    public func resumeAfterFailure() {
        writer.withLock { $0.heldError = nil }
    }

    /// Whether appends are being failed since a failed batch (`holdsAfterFailure`), or for good
    /// because a failed batch could not be cut off.
    public var isHoldingAfterFailure: Bool {
        writer.withLock { $0.heldError != nil || $0.stuckError != nil }
    }

    /// Reads back what is durable now, exactly as `open` would: the newest usable snapshot and the
    /// records after it. For a server that must throw away in-memory state after a failed append.
    /// Call with no append in flight; blocks while a snapshot is being written. Throws the
    /// journal's error when a failed batch could not be cut off (the segment may then hold bytes
    /// that were reported as not written), and whatever reading the files throws.
    public func readBack() throws(JournalError) -> Recovery {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let result: Result<Recovery, JournalError> = snapshotCatalog.withLock { _ in
            writer.withLock { state in
                if let stuck = state.stuckError { return .failure(stuck) }
                do throws(JournalError) {
                    return .success(try RecoveryProcedure(directory: dataDirectory, configuration: configuration).run().recovery)
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }

    // MARK: Closing

    /// Writes everything appended so far, fdatasyncs it and releases the data directory. Blocks
    /// until done. Later appends fail with `.closed`. Throws if the final sync fails: the records of
    /// the last interval may then not be durable. Must not be called on the journal's queue or the
    /// completion queue (from a completion): it waits for both.
    public func close() throws(JournalError) {
        dispatchPrecondition(condition: .notOnQueue(queue))
        if let completionQueue = configuration.completionQueue {
            dispatchPrecondition(condition: .notOnQueue(completionQueue))
        }
        let wasOpen = intake.withLock { intake in
            defer { intake.isClosed = true }
            return !intake.isClosed
        }
        guard wasOpen else { return }
        let result: Result<Void, JournalError> = queue.sync {
            drain(untilEmpty: true)
            return writer.withLock { state in
                defer {
                    syscalls.close(state.descriptor)
                    state.isClosed = true
                }
                guard state.isDirty else { return .success(()) }
                do throws(Errno) {
                    try syscalls.dataSync(state.descriptor)
                    counters.withLock { $0.syncs += 1 }
                    state.isDirty = false
                    return .success(())
                } catch {
                    return .failure(JournalError(error, path: nil))
                }
            }
        }
        syscalls.close(lockDescriptor)
        // The last batches' completions have run when this returns, on either queue.
        configuration.completionQueue?.sync {}
        try result.get()
    }

    // MARK: Introspection

    /// Counters since open, for metrics and for tests of the group commit.
    public var statistics: JournalStatistics { counters.withLock { $0 } }

    /// The sequence the next append will get.
    public var nextSequence: UInt64 { intake.withLock { $0.nextSequence } }
}

/// Counters since the journal was opened.
public struct JournalStatistics: Sendable, Equatable {
    /// Batches attempted (each one write, plus one fdatasync under `.always`).
    public var batches = 0
    /// Batches whose write or sync failed.
    public var failedBatches = 0
    /// fdatasync calls that succeeded on segments (batch, interval, roll and close syncs).
    public var syncs = 0
    /// Deferred `.interval` syncs that failed (they are retried).
    public var failedSyncs = 0
    /// Record bytes written by successful batches.
    public var bytesWritten = 0
    /// Segments started after open.
    public var segmentsCreated = 0
}
