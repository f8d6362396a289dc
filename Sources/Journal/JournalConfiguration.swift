import Dispatch
import Platform

/// When an append's completion is called, relative to the data reaching the disk.
public enum SyncPolicy: Sendable, Equatable {
    /// Completion after `fdatasync` of the batch: an acknowledged record survives power loss.
    case always
    /// Completion after the `write`; `fdatasync` runs at most this many milliseconds later. Power loss
    /// (not a process crash: the page cache keeps written bytes) can lose the acknowledged records of
    /// roughly the last interval plus the batch being synced.
    case interval(milliseconds: Int)
    /// Completion after the `write`, no `fdatasync` until `close()`. For tests and benchmarks.
    case never
}

/// How the journal lays out and syncs its files.
public struct JournalConfiguration: Sendable {
    /// Durability of acknowledged appends.
    /// Default `.always`: the server acknowledges to users, so an ack must survive a power cut.
    public var syncPolicy: SyncPolicy
    /// A segment is closed and a new one started once it holds at least this many bytes.
    /// Default 64 MiB: large enough that rolling (a create plus two fsyncs) is rare, small enough
    /// that a snapshot frees space in useful steps. A batch is never split, so a segment can exceed
    /// this by one batch.
    public var segmentSize: Int
    /// The largest payload `append` accepts; recovery treats a longer length field as damage.
    /// Default 16 MiB: far above any event, small enough that a corrupt length cannot make recovery
    /// allocate gigabytes.
    public var maximumRecordSize: Int
    /// The largest (uncompressed) snapshot accepted on read.
    /// Default 4 GiB: a sanity bound checked before allocating, not a capacity plan.
    public var maximumSnapshotSize: Int
    /// Compress snapshots with zlib.
    /// Default `true`: snapshots are mostly repetitive encoded state and shrink several times,
    /// and they are written off the serving path, so the CPU is cheap.
    public var compressesSnapshots: Bool
    /// After a failed batch, fail every later append without writing it until
    /// `resumeAfterFailure()` is called.
    /// Default `false`: the journal itself needs no pause. A server that applies a change in memory
    /// before appending it sets this, because an append queued behind a failed one may depend on
    /// it (an accept after a publish) and must not reach the disk without it; the server rebuilds
    /// its memory from disk, then resumes.
    public var holdsAfterFailure = false
    /// Where completions run: each batch's completions are handed over in one block, in sequence
    /// order, so a server that completes on its own event loop pays one queue hop per batch, not
    /// one per record. Must be serial.
    /// Default nil: on the journal's own queue, right after the batch.
    public var completionQueue: DispatchQueue?
    /// Where the writer is started from: when set, the first append into an empty batch starts
    /// the writer from a block queued on this queue instead of at once, so every append made
    /// by the blocks already waiting there joins the batch. A server whose appends all come from
    /// one event loop passes that loop's queue: a burst of requests then becomes one write and
    /// one fdatasync, instead of the writer waking (on the same core) for the first of them.
    /// Default nil: start at once.
    public var writerStartQueue: DispatchQueue?

    /// Bytes of zeros written ahead of the records in the active segment, a chunk at a time, so a
    /// batch's fdatasync overwrites blocks that already exist: it flushes only the data, not the
    /// file's size and block map too, which here halves its latency and CPU. Recovery reads a
    /// run of zeros at a record boundary as the end of the written part.
    /// Default 0 (off): a segment's size is then exactly its records, which the file-level tests
    /// rely on; the server turns it on.
    public var preallocationSize = 0

    /// Told of every batch written: how many records it held and how long its write (and its
    /// fdatasync under `.always`) took. For metrics: it runs on the writer's thread, between
    /// batches, so it must be quick. Default nil.
    public var batchObserver: (@Sendable (_ records: Int, _ seconds: Double) -> Void)?

    /// The system calls this journal makes, and the faults they inject.
    /// Default `.live`: the real calls. Tests hand in a layer with a fault rule; it affects this
    /// journal only.
    public var syscalls: Syscalls = .live

    public init(syncPolicy: SyncPolicy = .always,
                segmentSize: Int = 64 << 20,
                maximumRecordSize: Int = 16 << 20,
                maximumSnapshotSize: Int = 4 << 30,
                compressesSnapshots: Bool = true) {
        precondition(segmentSize > 0, "segmentSize must be positive")
        precondition(maximumRecordSize > 0 && maximumRecordSize <= Int(UInt32.max), "maximumRecordSize must fit the 32-bit length field")
        if case .interval(let milliseconds) = syncPolicy {
            precondition(milliseconds > 0, "the sync interval must be positive")
        }
        self.syncPolicy = syncPolicy
        self.segmentSize = segmentSize
        self.maximumRecordSize = maximumRecordSize
        self.maximumSnapshotSize = maximumSnapshotSize
        self.compressesSnapshots = compressesSnapshots
    }
}

extension JournalConfiguration {
    /// Makes every journal write and sync fail with `ENOSPC` while `isDiskFull()` returns true: a
    /// full disk on demand, for end-to-end tests of a server's storage-failure path where mounting
    /// a small file system is not possible. Snapshot writes fail too, as they would on a full disk.
    public mutating func simulateFullDisk(when isDiskFull: @escaping @Sendable () -> Bool) {
        syscalls = Syscalls(injectingFaults: { call in
            (call == .write || call == .sync) && isDiskFull() ? .fail(.noSpace) : nil
        })
    }
}
