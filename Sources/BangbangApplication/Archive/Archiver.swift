// The archiver: the one writer of the order archive, off every owner's queue.
//
// THEORY OF OPERATION
//
// Closed orders leave the board shards in three steps, each durable before the next starts:
//   1. A change that leaves an order closed (completed, cancelled, expired, a group ended, a
//      rating of a closed order) is journaled like any other. Once its record is durable,
//      `CommitLog` hands the order as it now is, with the record's sequence, to `noteDurable`,
//      on the publishing queue, so in sequence order. Every other durable record is noted too
//      (its sequence only), which is what lets the watermark move while nothing closes.
//   2. On `queue`, pending orders are written in batches (up to `batchLimit` orders, gathered
//      for `batchDelay`, 100 ms) by one `OrderArchive.archive(_:throughSequence:)` transaction: the
//      orders, idempotent by (id, revision), and the watermark. After the commit, the shards'
//      owners are told which (id, revision) the archive now holds (`onArchived`).
//   3. Each shard owner sweeps now and then (`ShardOwner.moveArchivedOrders`) and journals a
//      `.movedToArchive` event for every order that is closed, past its rating window and
//      archived at its current revision; applying it removes the order from memory.
// In a cluster, step 2 first publishes the batch to the shared history stream and waits for its
// acknowledgement (`beforeStoring`, HistoryStream.swift): an order leaves memory only once it
// is in the history every node's archive follows, so the next owner has it too.
// A crash between any two steps loses nothing: until step 3's record is durable the order is in
// memory, so in the next snapshot or in the journal after it, and recovery hands every closed
// order still in memory to the archiver again (`noteRecovered`); writing one twice changes
// nothing. A rating after step 2 makes a newer revision, which is archived again before the
// order may leave.
//
// FAILURES
//
// A failed batch (full disk, I/O error, a fault injected by a test) is rolled back whole by the
// archive, logged, and retried with a doubling delay (`retryDelays`). Nothing waits for it: live
// requests never touch the archive, and the orders simply stay in memory until a batch holding
// them succeeds. Pending orders share their storage with the shards' values, so a long outage
// costs little memory beyond what the shards hold anyway.
//
// COVERAGE
//
// `coveredSequence` is the journal sequence through which every closing change is durably in the
// archive: everything noted when nothing is pending, else up to the oldest pending one (nothing
// while orders found at recovery are pending). Journal segments are deleted only below both it and the older kept snapshot
// (Durability.swift), so the journal never drops a record the archive still lacks.
import BangbangCore
import Dispatch
import OrderArchive
import Synchronization

/// State lives under `state`'s lock (touched by the publishing queue and by `queue`); the
/// archive is written only on `queue`, which is serial.
package final class Archiver: Sendable {
    /// Orders in one transaction, at most.
    package static let batchLimit = 512
    /// How long the first pending order waits for others to share its transaction. Nothing
    /// waits for the archive, and each transaction ends in an fsync that shares the disk with
    /// the journal's, so few large batches beat many small ones.
    static let batchDelay: DispatchTimeInterval = .milliseconds(100)
    /// Delays between retries of a failed batch: 50 ms, doubling, at most 30 s.
    static let retryDelays = (first: 50, maximum: 30_000)

    package struct Closed: Sendable {
        let order: Order
        /// The record that closed it; 0 when found in memory at recovery (the record may be
        /// anywhere before).
        package let sequence: UInt64
    }

    private struct State {
        var pending: [Closed] = []
        /// The highest durable sequence noted; every closing change up to it is pending or archived.
        var noted: UInt64 = 0
        var isScheduled = false
        var isWriting = false
        /// Milliseconds before the next retry; 0 while batches succeed.
        var retryDelay = 0
        var failures = 0
    }

    let archive: OrderArchive
    let queue = DispatchQueue(label: "bangbang.archiver", qos: .utility)
    private let state = Mutex(State())
    private let logger: Logger
    private let metrics: ServerMetrics
    private let archivedHandler = HandlerSlot<[(id: OrderID, revision: Int)]>()
    /// Runs on `queue` before a batch is stored; a throw fails the batch (it is retried).
    private let beforeStoring: (@Sendable ([ArchivedOrder]) throws -> Void)?

    init(archive: OrderArchive, logger: Logger, metrics: ServerMetrics,
         beforeStoring: (@Sendable ([ArchivedOrder]) throws -> Void)? = nil) {
        self.archive = archive
        self.logger = logger
        self.metrics = metrics
        self.beforeStoring = beforeStoring
    }

    /// Told, on `queue`, of every (id, revision) a committed batch stored. Set once, at start.
    func onArchived(_ handler: @escaping @Sendable ([(id: OrderID, revision: Int)]) -> Void) {
        archivedHandler.set(handler)
    }

    /// A durable record, and the order it left closed, if any. Call in sequence order (the
    /// publishing queue).
    func noteDurable(sequence: UInt64, closing order: Order?) {
        let schedules = state.withLock { state -> Bool in
            state.noted = max(state.noted, sequence)
            guard let order else { return false }
            state.pending.append(Closed(order: order, sequence: sequence))
            metrics.archivePending.set(state.pending.count)
            return scheduleIfNeeded(&state)
        }
        if schedules { schedule(after: Self.batchDelay) }
    }

    /// The closed orders found in memory after recovery, which covers the journal through
    /// `sequence`. Call once, before the first live change is noted.
    func noteRecovered(_ orders: [Order], through sequence: UInt64) {
        let schedules = state.withLock { state -> Bool in
            state.noted = max(state.noted, sequence)
            state.pending.append(contentsOf: orders.map { Closed(order: $0, sequence: 0) })
            metrics.archivePending.set(state.pending.count)
            return !orders.isEmpty && scheduleIfNeeded(&state)
        }
        if schedules { schedule(after: .never) }
    }

    /// See COVERAGE above.
    var coveredSequence: UInt64 {
        state.withLock { state in state.pending.first.map { $0.sequence == 0 ? 0 : $0.sequence - 1 } ?? state.noted }
    }

    /// Orders waiting for a batch, and failed batches since start (for tests and logs).
    var backlog: (pending: Int, failures: Int) { state.withLock { ($0.pending.count, $0.failures) } }

    private func scheduleIfNeeded(_ state: inout State) -> Bool {
        guard !state.isScheduled, !state.isWriting, state.retryDelay == 0 else { return false }
        state.isScheduled = true
        return true
    }

    /// `.never`: at once.
    private func schedule(after delay: DispatchTimeInterval) {
        let work: @Sendable () -> Void = { [weak self] in self?.writeBatch() }
        if delay == .never { queue.async(execute: work) } else { queue.asyncAfter(deadline: .now() + delay, execute: work) }
    }

    /// Writes the oldest pending orders in one transaction. Runs on `queue`.
    private func writeBatch() {
        dispatchPrecondition(condition: .onQueue(queue))
        let taken = state.withLock { state -> (batch: [Closed], through: UInt64)? in
            state.isScheduled = false
            guard !state.pending.isEmpty else { return nil }
            state.isWriting = true
            let count = min(Self.batchLimit, state.pending.count)
            let batch = Array(state.pending.prefix(count))
            // All of what is pending: through the last noted record; else through the last taken.
            let through = count == state.pending.count ? state.noted : batch[count - 1].sequence
            return (batch, through)
        }
        guard let taken else { return }
        let records: [ArchivedOrder]
        do {
            // Orders found in memory at recovery are mostly stored already, at the same revision.
            var stored: [String: Int64] = [:]
            if taken.batch.contains(where: { $0.sequence == 0 }) {
                stored = try archive.revisions(of: taken.batch.map { String($0.order.id.rawValue) })
            }
            records = taken.batch.compactMap { closed in
                let order = closed.order
                if let revision = stored[String(order.id.rawValue)], revision >= Int64(order.revision) { return nil }
                return ArchivedOrder(order)
            }
            if !records.isEmpty { try beforeStoring?(records) }
            try archive.archive(records, throughSequence: taken.through)
        } catch {
            metrics.archiveFailures.increment()
            let (delay, failures) = state.withLock { state -> (Int, Int) in
                state.isWriting = false
                state.failures += 1
                state.retryDelay = state.retryDelay == 0
                    ? Self.retryDelays.first : min(state.retryDelay * 2, Self.retryDelays.maximum)
                return (state.retryDelay, state.failures)
            }
            logger.error("archive_write_failed", ["error": "\(error)", "orders": taken.batch.count,
                                                  "retry_ms": delay, "failures": failures,
                                                  "detail": "the orders stay in memory and are written when the archive accepts them"])
            queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [weak self] in
                self?.state.withLock { $0.isScheduled = true }
                self?.writeBatch()
            }
            return
        }
        metrics.archivedOrders.add(records.count)
        let (more, recovered) = state.withLock { state -> (Bool, Bool) in
            state.pending.removeFirst(taken.batch.count)
            metrics.archivePending.set(state.pending.count)
            state.isWriting = false
            let recovered = state.retryDelay != 0
            state.retryDelay = 0
            return (!state.pending.isEmpty && scheduleIfNeeded(&state), recovered)
        }
        if recovered { logger.info("archive_write_recovered", ["orders": taken.batch.count]) }
        archivedHandler(taken.batch.map { ($0.order.id, $0.order.revision) })
        if more { schedule(after: .never) }
    }
}
