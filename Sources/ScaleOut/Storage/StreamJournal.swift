// The application's journal in a cluster: the JetStream stream of the partition this node owns
// (its snapshots in the object store, its appends fenced so that an owner that lost its lease is
// refused), behind the same CommitJournal as the local log.
//
// Records go out in batches (RecordBatch.swift): what the committers handed over by the time the
// loop turns is one message (up to 256 KiB), so a burst of commits costs the NATS servers one
// replication. Records keep numbers of their own (the application's sequences), one per record;
// the stream's sequences count messages and are what the fences use.
//
// Messages are pipelined: each is fenced on the sequence before it and, after the first, on the
// message id of this owner's message before it (AppendPipeline.swift says why both), carrying
// `Nats-Msg-Id: <node>:<partition>:<message sequence>`; AppendPipeline releases the
// acknowledgements in order, and each batch's records complete in order on the completion queue
// (the publishing queue). A message with no definite answer (a NATS server died, the stream is
// electing a leader) is published again with the same message id and fences, with later ones
// held behind it, for up to the pipeline's retry bound. A refused message, or one still unknown
// at the bound, fails with every later one, and `onFailure` is told once: the node stops owning
// the partition (crash-only, the process exits and comes back as a standby). Their records
// complete with `.closed`, which the application treats as "shutting down": it answers
// `storage_unavailable` and does not try to rebuild memory in place.
//
// The pipeline lives on the NATS connection's loop, where the stream's answers arrive: an
// append is handed over under a short lock (the first of a burst schedules one turn of the loop),
// the loop batches the burst's appends in the order they were handed over, queues the messages
// on the connection, reads each acknowledgement in a callback, and sends the completions released
// during one turn to the completion queue in one block. So an append costs no task and no lock
// held across encoding, and the threads that commit never wait for the loop.
//
// Snapshots go to the object store (SnapshotStore), then the stream is purged through the
// message the snapshot's last record ends. That is safe because an order leaves memory only once
// it is in the cluster's history stream (HistoryStream.swift): every order is in the snapshot or
// in that stream, so the archive never needs a purged record. Recovery is the latest snapshot plus a
// replay of the stream after it (`recover`); the data directory's journal is never read.
import BangbangApplication
import Cluster
import Dispatch
import Journal
import JournalProtocol
import NATSClient
import NATSProtocol
import PartitionOwner
import SocketServer
import Synchronization

package final class StreamJournal: CommitJournal, @unchecked Sendable {
    // Confinement: `pipeline`, `nextRecordToStart`, `releasedThisTurn` and `isReleaseScheduled`
    // are touched only on `loop.queue` (the NATS connection's loop); `handoff`, `messageEnds`,
    // `batchObserver` and `appendedBytes` are safe from any thread.
    package typealias Completion = @Sendable (Result<UInt64, Journal.JournalError>) -> Void

    let partitionJournal: PartitionJournal
    let snapshots: SnapshotStore
    let nodeID: String
    private let loop: EventLoop
    private let completionQueue: DispatchQueue
    private let onFailure: @Sendable (String) -> Void
    private let onRetry: @Sendable (RetryNews) -> Void
    /// An append handed over, until the loop puts it in a batch.
    package struct PendingAppend: Sendable {
        var payload: [UInt8]
        package var completion: Completion
    }
    /// One message: consecutive records, numbered from `first`, kept until it is settled (it may
    /// be published again, the same bytes under the same message id), with each record's
    /// completion.
    package struct Batch: Sendable {
        var first: UInt64
        var completions: [Completion]
        var payload: [UInt8]
        var startedAt: ContinuousClock.Instant
    }
    package typealias Pipeline = AppendPipeline<Batch>

    /// Appends handed over and not yet started on the loop, and how many were ever handed over.
    private struct Handoff {
        var appends: [PendingAppend] = []
        var lastSequence: UInt64
    }

    private let handoff: Mutex<Handoff>
    private var pipeline: Pipeline
    private var nextRecordToStart: UInt64
    /// The stored messages since the last purge, each with the number of its last record (the
    /// first is where recovery ended): a snapshot's last record names the message to purge through.
    private let messageEnds: Mutex<[JournalEnd]>
    private var releasedThisTurn: [Pipeline.Release] = []
    private var isReleaseScheduled = false
    private let appendedBytes = Atomic<Int>(0)
    private let batchObserver = HandlerSlot<(records: Int, seconds: Double)>()
    /// The revision of the partition's snapshot this node last read or stored: a snapshot is
    /// stored only in place of that one (`storeSnapshot`).
    private let snapshotRevision: Mutex<UInt64>

    /// `end`: where the stream ended when this node replayed it; the first message is fenced on
    /// its last message, and records are numbered on from its last record. `snapshotRevision`:
    /// the revision of the snapshot it recovered from.
    init(journal: PartitionJournal, snapshots: SnapshotStore, nodeID: String, end: JournalEnd,
         snapshotRevision: UInt64 = 0,
         completionQueue: DispatchQueue, onRetry: @escaping @Sendable (RetryNews) -> Void = { _ in },
         onFailure: @escaping @Sendable (String) -> Void) {
        self.snapshotRevision = Mutex(snapshotRevision)
        partitionJournal = journal
        self.snapshots = snapshots
        self.nodeID = nodeID
        loop = journal.jetStream.connection.loop
        self.completionQueue = completionQueue
        self.onFailure = onFailure
        self.onRetry = onRetry
        handoff = Mutex(Handoff(lastSequence: end.record))
        pipeline = AppendPipeline(after: end.message)
        nextRecordToStart = end.record + 1
        messageEnds = Mutex([end])
    }

    package func appendRecord(_ payload: [UInt8], completion: @escaping Completion) {
        appendedBytes.add(payload.count, ordering: .relaxed)
        let isFirstOfBurst = handoff.withLock { handoff in
            handoff.appends.append(PendingAppend(payload: payload, completion: completion))
            handoff.lastSequence += 1
            return handoff.appends.count == 1
        }
        if isFirstOfBurst { loop.execute { self.startHandedOver() } }
    }

    /// Messages on the wire at once, at most: while one is, what the committers hand over waits
    /// and goes out together in the next message (group commit, as the local journal's batches),
    /// so the busier the partition, the more each replication carries. A lone commit goes at once.
    /// One measured best: 7.5 records a message under load, against 5.2 with two in flight and 3.6
    /// with four, where a message rarely waited long enough to carry much and the NATS servers'
    /// share per publish went back up.
    static let maximumMessagesInFlight = 1

    /// Starts every append handed over so far, in order, as few messages as fit, once fewer than
    /// `maximumMessagesInFlight` are on the wire (or at once, to refuse them, once appends fail).
    /// On the loop.
    private func startHandedOver() {
        guard pipeline.inFlightCount < Self.maximumMessagesInFlight || pipeline.failure != nil else { return }
        let appends = handoff.withLock { handoff in
            defer { handoff.appends.removeAll(keepingCapacity: true) }
            return handoff.appends
        }
        var start = 0
        while start < appends.count {
            var end = start
            var size = 0
            while end < appends.count,
                  end == start || size + RecordBatch.encodedSize(of: appends[end].payload) <= RecordBatch.maximumBytes {
                size += RecordBatch.encodedSize(of: appends[end].payload)
                end += 1
            }
            let batch = Batch(first: nextRecordToStart, completions: appends[start..<end].map(\.completion),
                              payload: RecordBatch.encode(appends[start..<end].lazy.map(\.payload)), startedAt: .now)
            nextRecordToStart += UInt64(end - start)
            start = end
            switch pipeline.start(batch) {
            case (.publish(let expected, let sequence, let followsOwnAppend), _):
                send(Pipeline.Publish(expected: expected, sequence: sequence, followsOwnAppend: followsOwnAppend,
                                      completion: batch))
            case (.refuse, let refused):
                if let refused { release([refused], failure: nil) }
            case (.queued, _):
                break
            }
        }
    }

    /// The stream stores a message only if its last message has this id.
    static let expectedLastMessageIDHeader = "Nats-Expected-Last-Msg-Id"

    /// Bound on one attempt of an append: well under the stream's own API timeout, so an append
    /// lost with a NATS server is published again soon (it is stored once whatever happens).
    static let appendTimeoutMilliseconds = 2_000

    /// This node's append of `sequence`: a retry within the stream's duplicate window is not
    /// stored twice, and the next append names it as the record it must follow.
    func messageID(of sequence: UInt64) -> String { "\(nodeID):\(partitionJournal.partition):\(sequence)" }

    /// Queues one attempt of an append on the connection. On the loop, so attempts go out in the
    /// order the pipeline hands them.
    private func send(_ publish: Pipeline.Publish) {
        let journal = partitionJournal
        var jetStream = journal.jetStream
        jetStream.timeoutMilliseconds = Self.appendTimeoutMilliseconds
        let options = PublishOptions(messageID: messageID(of: publish.sequence), expectedLastSequence: publish.expected,
                                     expectedStream: journal.streamName)
        var headers = NATSHeaders()
        headers.set(RecordBatch.firstRecordHeader, String(publish.completion.first))
        if publish.followsOwnAppend { headers.set(Self.expectedLastMessageIDHeader, messageID(of: publish.expected)) }
        let sequence = publish.sequence
        do {
            try jetStream.startPublish(journal.subject, payload: publish.completion.payload, options: options,
                                       headers: headers) { result in
                let answer = Self.answer(result, fencedOn: sequence - 1)
                self.perform(self.pipeline.answer(answer, for: sequence, now: .now))
            }
        } catch {
            perform(pipeline.answer(.unknown("\(error)"), for: sequence, now: .now))
        }
    }

    /// What an operator is told of a retry episode.
    package enum RetryNews: Sendable {
        case started(String)
        case settled(Duration, rounds: Int)
    }

    /// Does what the pipeline asked for. On the loop.
    private func perform(_ step: Pipeline.Step) {
        if let why = step.retryStarted { onRetry(.started(why)) }
        if let (duration, rounds) = step.retrySettled { onRetry(.settled(duration, rounds: rounds)) }
        release(step.released, failure: step.newFailure)
        for publish in step.publish { send(publish) }
        // A message settled: what waited behind the window goes out.
        if !step.released.isEmpty { startHandedOver() }
        if let delay = step.retryAfter {
            let milliseconds = Int(delay.components.seconds * 1_000 + delay.components.attoseconds / 1_000_000_000_000_000)
            loop.schedule(afterMilliseconds: max(1, milliseconds)) {
                self.perform(self.pipeline.retry(now: .now))
            }
        }
    }

    private static func answer(_ result: Result<PublishAck, NATSClientError>, fencedOn expected: UInt64) -> Pipeline.Answer {
        switch result {
        case .success(let acknowledgement):
            .stored(at: acknowledgement.sequence)
        case .failure(.jetStream(let error)) where error.isWrongLastSequence:
            .failed("fenced: the stream no longer ends at \(expected), another node appended")
        case .failure(.jetStream(let error)) where error.isWrongLastMessageID:
            .failed("fenced: the record at \(expected) is not this node's, another node appended")
        case .failure(let error):
            .unknown("\(error)")
        }
    }

    /// Queues completions to run in order on the completion queue: those released during one
    /// turn of the loop go in one block, after the turn. On the loop.
    private func release(_ released: [Pipeline.Release], failure: String?) {
        if let failure { onFailure(failure) }
        guard !released.isEmpty else { return }
        releasedThisTurn.append(contentsOf: released)
        let stored = released.compactMap { entry in
            entry.sequence.map { JournalEnd(message: $0, record: entry.completion.first + UInt64(entry.completion.completions.count) - 1) }
        }
        if !stored.isEmpty { messageEnds.withLock { $0 += stored } }
        let now = ContinuousClock.now
        for entry in released where entry.sequence != nil {
            batchObserver((entry.completion.completions.count, (now - entry.completion.startedAt).seconds))
        }
        guard !isReleaseScheduled else { return }
        isReleaseScheduled = true
        loop.execute {
            self.isReleaseScheduled = false
            let due = self.releasedThisTurn
            self.releasedThisTurn.removeAll(keepingCapacity: true)
            self.completionQueue.async {
                for entry in due {
                    let batch = entry.completion
                    for (offset, completion) in batch.completions.enumerated() {
                        completion(entry.sequence == nil ? .failure(.closed) : .success(batch.first + UInt64(offset)))
                    }
                }
            }
        }
    }

    /// Tells `observer` of every message stored: how many records it held and how long it took
    /// from its first publish to its acknowledgement (for metrics; on the loop, so quick).
    func observeBatches(_ observer: @escaping @Sendable (_ records: Int, _ seconds: Double) -> Void) {
        batchObserver.set { observer($0.records, $0.seconds) }
    }

    package var nextSequence: UInt64 { handoff.withLock { $0.lastSequence + 1 } }

    package var bytesAppended: Int { appendedBytes.load(ordering: .relaxed) }

    /// The bound is not needed here: nothing leaves memory for the archive in a cluster (see the
    /// top of this file), so the stream is purged through the snapshot.
    ///
    /// A snapshot replaces only the one this node last read or stored. Should another have been
    /// stored meanwhile, one covering no more than this is replaced (a node that lost the lease
    /// writing late, before this node's first snapshot), and one covering more means this node
    /// is the late one: nothing is stored or purged. So a late writer never puts an older
    /// snapshot in place of one whose records the stream no longer holds.
    package func storeSnapshot(_ contents: [UInt8], inboxStates: InboxStates, coveringThrough sequence: UInt64,
                       keepingRecordsAfter bound: UInt64) throws -> StoredSnapshot {
        let (journal, snapshots) = (partitionJournal, snapshots)
        // A cut is made with no commit in flight, so its last record ends a stored message.
        guard let message = messageEnds.withLock({ ends in ends.last { $0.record == sequence }?.message }) else {
            throw ClusterError("record \(sequence) of \(journal.partition) ends no stored message; a snapshot cut it in two")
        }
        let snapshot = PartitionSnapshot(partition: journal.partition, sequence: sequence, state: contents,
                                         outbox: inboxStates.outbox, inbox: inboxStates.reader, message: message)
        let expected = snapshotRevision.withLock { $0 }
        let stored = try blocking { () async throws -> UInt64 in
            var revision = expected
            for _ in 0..<Self.snapshotAttempts {
                do {
                    revision = try await snapshots.save(snapshot, replacing: revision)
                    try await journal.purge(through: message)
                    return revision
                } catch Cluster.JournalError.snapshotReplaced {
                    let (other, otherRevision) = try await snapshots.latestWithRevision(of: journal.partition)
                    if let other, other.sequence > sequence {
                        throw ClusterError("the snapshot of \(journal.partition) was replaced by one covering \(other.sequence), "
                                           + "past this node's \(sequence): another node owns the partition")
                    }
                    revision = otherRevision
                }
            }
            throw ClusterError("the snapshot of \(journal.partition) kept being replaced by other nodes' meanwhile")
        }
        snapshotRevision.withLock { $0 = stored }
        messageEnds.withLock { ends in ends.removeAll { $0.message < message } }
        return StoredSnapshot(location: "\(SnapshotStore.bucketName)/\(journal.partition)", contentBytes: contents.count,
                              storedBytes: snapshot.encoded().count,
                              removed: ["\(journal.streamName) through message \(message) (record \(sequence))"])
    }

    /// Memory is never rebuilt in place in a cluster: a failed append ends the ownership.
    package func readBackAll() throws -> RecoveredLog {
        throw ClusterError("a partition's journal is not read back in place; the node restarts as a standby")
    }

    package func resumeAfterFailure() {}

    /// Every append not yet stored, and every later one, completes with `.closed`, in sequence
    /// order: those in flight once their answers are in, then those handed over (never published).
    package func close() throws {
        loop.execute {
            self.release(self.pipeline.close("the journal is closed"), failure: nil)
            self.startHandedOver()
        }
    }

    /// The partition as stored: its latest snapshot and every record after it, up to the
    /// stream's end when called, and where that end is.
    static func recover(_ journal: PartitionJournal, from snapshots: SnapshotStore) async throws -> (RecoveredLog, end: JournalEnd) {
        var recovered = RecoveredLog(snapshot: nil, snapshotSequence: 0, records: [])
        let end = try await journal.recover(from: snapshots, restore: { snapshot, revision in
            recovered.snapshot = snapshot?.state
            recovered.snapshotSequence = snapshot?.sequence ?? 0
            recovered.inboxStates = InboxStates(outbox: snapshot?.outbox, reader: snapshot?.inbox)
            recovered.snapshotRevision = revision
        }, apply: { sequence, record in
            recovered.records.append(JournalRecord(sequence: sequence, payload: record))
        })
        return (recovered, end)
    }

    /// Conditional saves tried before giving up, each after another node's snapshot was found
    /// in place of the one expected.
    static let snapshotAttempts = 4
}

/// Runs `body` on the cooperative pool and blocks the calling thread (never one of the pool's)
/// until it is done.
package func blocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<Value, any Error>?>(nil)
    Task {
        let outcome: Result<Value, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// A cluster operation that failed, said for an operator.
package struct ClusterError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
