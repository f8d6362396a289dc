// Durability beyond the journal's append: snapshots taken while the server serves, the final
// snapshot at shutdown, and rebuilding memory from disk after a journal write fails.
//
// THE CUT
//
// A snapshot must hold exactly the effect of the journal records through its covered sequence S:
// recovery loads it and replays the records after S, so a record both in the snapshot and after
// S would be applied twice, and one in neither would be lost. The state lives in three places
// that change at different moments:
//   - the owners (accounts store, every board shard) apply a change on their serial queue and
//     append its record in the same block (their `commit`), so the sequence is assigned
//     while the change is already in the owner's value;
//   - the personal streams and the board numbering change later, on the publishing queue, when
//     the record is durable (`Publisher.publish`);
//   - a record that fails leaves its change in the owner's value until the rebuild below.
// So the cut is taken in this order, on `maintenanceQueue`:
//   1. Suspend every owner queue from inside a block on it: each queue stops between two blocks,
//      so no change is half-done, and no new record can be appended (only owners append).
//   2. Wait until no commit is in flight: every appended record has completed, so the streams and
//      board numbering include every durable change (`CommitLog` decrements the in-flight count
//      after `publish`).
//   3. If a record failed and memory has not been rebuilt yet, give up: memory is ahead of disk.
//   4. S = `journal.nextSequence - 1`: every record ≤ S was appended by a block that has finished,
//      so its change is in the owners' values and was published; no record > S exists yet.
//   5. Copy the owners' values, the streams and the board numbering (copy-on-write: O(1) each),
//      then resume the owners. The pause is one journal batch at most.
// Encoding and writing (temp file, fsync, rename, directory fsync, in `WriteAheadLog.writeSnapshot`)
// happen on `snapshotQueue` while the server goes on; the first change to each copied collection
// pays for one copy of it on its owner's queue (for a shard's orders, a pointer per order: an
// order's fields live in one shared storage object, Order.swift and OrderTable.swift).
//
// STORAGE FAILURES
//
// A failed append already applied its change in memory, and changes queued behind it may depend
// on it. The journal is opened with `holdsAfterFailure`, so after a failed batch every later
// append fails too, unwritten, until we say so. The failed requests get `storage_unavailable`;
// then, on `maintenanceQueue`: suspend the owners, wait for the in-flight commits (all of them
// fail while the journal holds), read back what is on disk (`WriteAheadLog.readBack`: snapshot plus
// records), rebuild the owners' values from it, install them, release the journal, resume the
// owners. The personal streams and board numbering are kept as they are: they only ever received
// changes whose records were durable, which is exactly what the rebuild restores. Queries work
// throughout (after the pause); while the disk stays full, each change fails and triggers
// another rebuild; once space returns, changes succeed again. Unstored state (SMS codes being
// waited for, login throttles) goes back to what disk has, so a code sent just before the failure
// may have to be requested again. If reading back fails, the application asks for the process to
// end (`ExitRequests`, status 75) so a supervisor restarts it from what is on disk.
//
// IN A CLUSTER
//
// The journal is the owned partition's stream (ScaleOut's StreamJournal.swift): a snapshot goes to
// the object store and the stream is purged through it, and memory is never rebuilt in place. A
// failed append there means the node may no longer own the partition, so every later append
// fails with `.closed` (no rebuild is scheduled for it) and the node exits for its supervisor to
// restart it as a standby. With the account partition on a stream of its own, the cut also takes
// the inbox's states and each partition's half goes to its own object (PartitionedSnapshots.swift).
import BangbangCore
import BangbangStorage
import Dispatch
import Foundation
import Journal

/// The owners' values outside their owners: being recovered, or a snapshot's copy.
package struct OwnedState: Sendable {
    package var accounts: AccountStore
    package var shards: [BoardShard]

    /// The state a snapshot holds, or the empty state.
    init(_ snapshot: SnapshotContents?, policy: AccountPolicy, layout: BoardLayout, orderSerials: IDSpace = .all) throws {
        try self.init(boards: snapshot?.boardsPartition, accounts: snapshot?.accountsPartition, policy: policy, layout: layout,
                      orderSerials: orderSerials)
    }

    /// The state the partitions' halves hold, each absent half empty; the shards hand out the
    /// serials of `orderSerials` (their board partition's).
    init(boards: BoardsPartitionState?, accounts: AccountsPartitionState?, policy: AccountPolicy, layout: BoardLayout,
         orderSerials: IDSpace = .all) throws {
        self.accounts = AccountStore(policy: policy, state: accounts?.accounts ?? AccountState())
        guard let boards else {
            shards = (0..<layout.shardCount).map { BoardShard(index: $0, serials: orderSerials) }
            return
        }
        shards = try boards.shards.map { shard in
            guard let placed = shard.handingOut(orderSerials) else {
                throw JournalEntryError(message: "the snapshot's board shard \(shard.index) holds orders of another partition "
                                        + "than the one whose serials are \(orderSerials); it is not this partition's snapshot")
            }
            return placed
        }
    }
}

/// Commits between append and completion, and whether memory is ahead of the disk.
package struct CommitTracker: Sendable {
    var inFlight = 0
    /// Failed appends since start, for the log and tests.
    var failures = 0
    /// A record failed and memory has not been rebuilt from disk since.
    var isRebuildPending = false
    var isShuttingDown = false
}

/// When the next periodic snapshot is due.
package struct SnapshotSchedule: Sendable {
    /// `SnapshotCut.progress` of the newest snapshot (written or loaded).
    var lastProgress: UInt64 = 0
    /// `journal.statistics.bytesWritten` when the last snapshot's cut was taken.
    var bytesAtLastSnapshot = 0
    var lastSnapshotAt = ContinuousClock.now
    var isWriting = false
    /// The size of the last snapshot's contents: the next one is encoded into a buffer of about
    /// that size plus an eighth.
    var lastContentBytes = 0
}

/// A consistent copy of everything a snapshot holds, and the last sequence it covers.
package struct SnapshotCut: Sendable {
    package var sequence: UInt64
    var contents: SnapshotContents
    /// With the account partition on a journal of its own (PartitionedStorage.swift).
    var partitioned: PartitionedCut? = nil

    /// Grows with every record the cut covers, in either journal: a cut is worth writing only
    /// when it is past the last one written.
    var progress: UInt64 { sequence + (partitioned?.accountsSequence ?? 0) }
}

extension Application {
    /// Names a file whose existence makes every journal write fail with ENOSPC (test setting).
    static let simulatedFullDiskVariable = "BANGBANG_TEST_FULL_DISK_FILE"

    private var ownerQueues: [DispatchQueue] { [accounts.queue] + shards.map(\.queue) }

    // MARK: Holding the owners

    /// Stops every owner queue between two blocks and returns once all have stopped. Call on
    /// `maintenanceQueue`; pair with `resumeOwners`.
    private func suspendOwners() {
        let stopped = DispatchGroup()
        for queue in ownerQueues {
            stopped.enter()
            // Suspending from inside a block on the queue: that block finishes, no later one starts.
            queue.async {
                queue.suspend()
                stopped.leave()
            }
        }
        stopped.wait()
    }

    private func resumeOwners() {
        for queue in ownerQueues { queue.resume() }
    }

    /// Waits for every appended record's completion. With the owners suspended nothing new can
    /// be appended, so this ends after at most one journal batch.
    private func waitForCommitsInFlight() {
        while tracking.withLock({ $0.inFlight }) > 0 {
            usleep(100)
        }
    }

    // MARK: Snapshots

    /// Bytes appended to the journals since start.
    private var bytesAppended: Int { journal.bytesAppended + (inbox == nil ? 0 : accountsJournal.bytesAppended) }

    /// Takes the cut described at the top of this file. Runs on `maintenanceQueue`. Nil when
    /// memory is ahead of the disk (a failed record not yet rebuilt).
    /// `whole`: both partitions' state in one snapshot of `journal`'s, whatever the journals (an
    /// import's, below).
    func takeSnapshotCut(whole: Bool = false) -> SnapshotCut? {
        dispatchPrecondition(condition: .onQueue(maintenanceQueue))
        suspendOwners()
        defer { resumeOwners() }
        waitForCommitsInFlight()
        guard !tracking.withLock({ $0.isRebuildPending }) else { return nil }
        let sequence = journal.nextSequence - 1
        guard let inbox, !whole else {
            return SnapshotCut(sequence: sequence, contents: SnapshotContents(boards: boardsPartitionState(),
                                                                              accounts: accountsPartitionState()))
        }
        return partitionedCut(through: sequence, inbox: inbox)
    }

    /// The board partition's half: its shards and feed numbering. Only with its owners suspended
    /// and no commit in flight, so the shards and the numbering hold the same records.
    func boardsPartitionState() -> BoardsPartitionState {
        BoardsPartitionState(shards: shards.map(\.shard), boardSequences: publisher.boards.sequences.withLock { $0 })
    }

    /// The account partition's half: the accounts and the personal streams. As above.
    func accountsPartitionState() -> AccountsPartitionState {
        AccountsPartitionState(accounts: accounts.store.state, streams: publisher.accounts.streams.snapshot())
    }

    /// Encodes and stores a cut. Runs on `snapshotQueue`. Returns whether the snapshot was written.
    @discardableResult
    func writeSnapshot(_ cut: SnapshotCut, reason: String) -> Bool {
        dispatchPrecondition(condition: .onQueue(snapshotQueue))
        let clock = ContinuousClock()
        let started = clock.now
        defer { snapshotSchedule.withLock { $0.isWriting = false } }
        do {
            let previousBytes = snapshotSchedule.withLock { $0.lastContentBytes }
            // Segments go only once the archive covers them too (Archiver.swift, COVERAGE).
            let archived = archiver.coveredSequence
            let bytes: [UInt8], encodedAt: ContinuousClock.Instant, report: StoredSnapshot
            if let partitioned = cut.partitioned {
                (bytes, encodedAt, report) = try storeHalves(of: cut, partitioned, expectedSize: previousBytes + previousBytes / 8,
                                                             keepingRecordsAfter: archived)
            } else {
                bytes = try cut.contents.encoded(expectedSize: previousBytes + previousBytes / 8)
                encodedAt = clock.now
                report = try journal.storeSnapshot(bytes, coveringThrough: cut.sequence, keepingRecordsAfter: archived)
            }
            snapshotSchedule.withLock { $0.lastContentBytes = bytes.count }
            let elapsed = clock.now - started
            metrics.snapshotDuration.observe(elapsed.seconds)
            metrics.snapshotBytes.set(report.storedBytes)
            snapshotSchedule.withLock { $0.lastProgress = max($0.lastProgress, cut.progress) }
            logger.info("snapshot_written", [
                "reason": reason, "file": report.location, "sequence": cut.sequence,
                "content_bytes": report.contentBytes, "file_bytes": report.storedBytes,
                "encode_ms": Int((encodedAt - started).seconds * 1000), "total_ms": Int(elapsed.seconds * 1000),
                "orders": cut.contents.shards.reduce(0) { $0 + $1.orders.count },
                "deleted_segments": report.removed.count, "archive_covers": archived,
            ])
            return true
        } catch {
            logger.error("snapshot_failed", ["reason": reason, "sequence": cut.sequence, "error": "\(error)"])
            return false
        }
    }

    /// Takes a cut now and writes it in the background, unless nothing changed since the last
    /// snapshot or one is still being written. Runs on `maintenanceQueue`.
    func snapshotInBackground(reason: String) {
        dispatchPrecondition(condition: .onQueue(maintenanceQueue))
        let isBusy = snapshotSchedule.withLock { schedule in
            defer { schedule.isWriting = true }
            return schedule.isWriting
        }
        guard !isBusy else { return }
        let bytesNow = bytesAppended
        guard let cut = takeSnapshotCut() else {
            snapshotSchedule.withLock { $0.isWriting = false }
            logger.warning("snapshot_skipped", ["reason": reason, "detail": "memory is being rebuilt after a storage failure"])
            return
        }
        let isNew = snapshotSchedule.withLock { schedule in
            schedule.bytesAtLastSnapshot = bytesNow
            schedule.lastSnapshotAt = .now
            if cut.progress <= schedule.lastProgress { schedule.isWriting = false }
            return cut.progress > schedule.lastProgress
        }
        guard isNew else { return }
        snapshotQueue.async { [self] in writeSnapshot(cut, reason: reason) }
    }

    /// Checks every second whether a snapshot is due by time or by journal growth.
    func scheduleSnapshots() {
        maintenanceQueue.asyncAfter(deadline: .now() + .seconds(1)) { [self] in
            guard !tracking.withLock({ $0.isShuttingDown }) else { return }
            let (bytesAtLast, lastAt) = snapshotSchedule.withLock { ($0.bytesAtLastSnapshot, $0.lastSnapshotAt) }
            let grown = bytesAppended - bytesAtLast
            if grown >= configuration.snapshotJournalBytes {
                snapshotInBackground(reason: "journal_bytes")
            } else if ContinuousClock.now - lastAt >= .seconds(configuration.snapshotIntervalSeconds) {
                snapshotInBackground(reason: "interval")
            }
            scheduleSnapshots()
        }
    }

    /// Stores a snapshot now and waits for it. A single node's state imported into a cluster
    /// becomes the cluster's only once this snapshot is in the object store (the partition's
    /// stream is empty), so it is taken before anything can be appended (ClusterRunner, import).
    /// It is one write, both partitions' state in `p0`'s object as one node's snapshot (the
    /// account partition's half is read from it until `a0` has a snapshot of its own), so an
    /// import is in the cluster whole or not at all.
    func storeImportSnapshot() throws {
        guard let cut = maintenanceQueue.sync(execute: { takeSnapshotCut(whole: true) }) else {
            throw StorageError("the imported state cannot be cut for a snapshot")
        }
        let stored = snapshotQueue.sync { () -> Bool in
            snapshotSchedule.withLock { $0.isWriting = true }
            return writeSnapshot(cut, reason: "import")
        }
        guard stored else { throw StorageError("the imported state could not be stored in the object store") }
    }

    /// Stops periodic snapshots and writes one covering every change made so far, waiting for a
    /// snapshot in progress first. Call at shutdown after the connections are closed and before
    /// the journal is closed; blocks. Returns whether a snapshot was written (false when nothing
    /// changed since the last one, or when it failed, which is logged).
    @discardableResult
    package func writeFinalSnapshot() -> Bool {
        tracking.withLock { $0.isShuttingDown = true }
        // Whatever periodic snapshot was started finishes first, so ours is the newest.
        snapshotQueue.sync {}
        guard let cut = maintenanceQueue.sync(execute: { takeSnapshotCut() }) else {
            logger.warning("snapshot_skipped", ["reason": "shutdown", "detail": "memory is ahead of the journal after a storage failure"])
            return false
        }
        let lastProgress = snapshotSchedule.withLock { $0.lastProgress }
        guard cut.progress > lastProgress else { return false }
        return snapshotQueue.sync {
            snapshotSchedule.withLock { $0.isWriting = true }
            return writeSnapshot(cut, reason: "shutdown")
        }
    }

    // MARK: Storage failures

    /// A record could not be stored. Runs on the publishing queue, from the failed completion.
    func noteStorageFailure(_ error: JournalError) {
        let schedulesRebuild = tracking.withLock { tracker -> Bool in
            tracker.failures += 1
            let isFirst = !tracker.isRebuildPending
            tracker.isRebuildPending = true
            return isFirst
        }
        if case .closed = error { return }
        logger.error("journal_write_failed", ["error": error.description])
        if schedulesRebuild {
            maintenanceQueue.async { [self] in recoverFromStorageFailure() }
        }
    }

    /// Replaces the owners' values with what is on disk, then lets the journal write again.
    /// Runs on `maintenanceQueue`. See "STORAGE FAILURES" above.
    func recoverFromStorageFailure() {
        dispatchPrecondition(condition: .onQueue(maintenanceQueue))
        let clock = ContinuousClock()
        let started = clock.now
        suspendOwners()
        waitForCommitsInFlight()
        let failures = tracking.withLock { $0.failures }
        do {
            let recovery = try journal.readBackAll()
            let snapshot = try recovery.snapshot.map { try SnapshotContents.decode($0) }
            var state = try OwnedState(snapshot, policy: accounts.store.policy, layout: layout, orderSerials: orderSerials)
            try replay(recovery.records, into: &state, publishing: false)
            install(state)
            refreshApprovedRunners()
            tracking.withLock { $0.isRebuildPending = false }
            journal.resumeAfterFailure()
            logger.warning("state_rebuilt", ["detail": "memory rebuilt from disk after a failed journal write; accepting changes again",
                                             "records": recovery.records.count, "failures": failures,
                                             "ms": Int((clock.now - started).seconds * 1000)])
        } catch {
            // The owners stay suspended: nothing may be served from memory that disk lacks.
            logger.error("storage_failure_restart", ["detail": "cannot read back the journal (\(error)); exiting to recover from disk"])
            exits.request(.restart("cannot read back the journal after a failed write (\(error)); start again to recover from disk"))
            return
        }
        resumeOwners()
        // Due times may differ from what the timers were armed for; re-arm from the new state.
        for owner in shards {
            owner.perform { $0.applyDueTransitions() }
        }
    }
}

extension Duration {
    package var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
