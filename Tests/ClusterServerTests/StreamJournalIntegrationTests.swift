// The application's journal in a cluster, against a real 3-node JetStream cluster: what an
// owner's StreamJournal acknowledged is what the next owner recovers, a stale owner's appends
// are refused once the next owner has appended (and it is told once), and a snapshot in the
// object store plus the stream after it is the partition.
@testable import BangbangCore
import BangbangStorage
import Cluster
import Dispatch
import Foundation
import Journal
import JournalProtocol
import NATSClient
import NATSProtocol
import NATSTestSupport
import Synchronization
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

/// The failures a StreamJournal reported, as its owner would see them.
final class Failures: Sendable {
    private let reasons = Mutex<[String]>([])
    func note(_ why: String) { reasons.withLock { $0.append(why) } }
    var all: [String] { reasons.withLock { $0 } }
}

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct StreamJournalIntegrationTests {
    let partition = ClusterNode.partition

    /// Appends `texts` one after the other without waiting (a pipeline) and returns the outcomes
    /// in completion order.
    func appendAll(_ texts: [String], to journal: StreamJournal) async -> [Result<UInt64, Journal.JournalError>] {
        let outcomes = Mutex<[Result<UInt64, Journal.JournalError>]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Atomic(texts.count)
            for text in texts {
                journal.appendRecord(Array(text.utf8)) { result in
                    outcomes.withLock { $0.append(result) }
                    if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                }
            }
        }
        return outcomes.withLock { $0 }
    }

    func owner(_ connection: NATSConnection, node: String, failures: Failures) async throws -> (StreamJournal, RecoveredLog) {
        let jetStream = JetStream(connection: connection)
        let journal = try await PartitionJournal.create(partition, in: jetStream)
        let snapshots = try await SnapshotStore.create(in: jetStream)
        let (recovered, last) = try await StreamJournal.recover(journal, from: snapshots)
        let streamJournal = StreamJournal(journal: journal, snapshots: snapshots, nodeID: node, end: last,
                                          snapshotRevision: recovered.snapshotRevision,
                                          completionQueue: DispatchQueue(label: "test.commits")) { why in
            failures.note(why)
        }
        return (streamJournal, recovered)
    }

    /// The number of the first record the stream still holds.
    func firstRecordStored(in journal: PartitionJournal) async throws -> UInt64? {
        let info = try await journal.jetStream.streamInfo(journal.streamName)
        guard info.lastSequence >= info.firstSequence else { return nil }
        let message = try await journal.jetStream.message(in: journal.streamName, sequence: info.firstSequence)
        return message.headers?[RecordBatch.firstRecordHeader].flatMap(RecordBatch.firstRecord(fromHeader:)) ?? message.sequence
    }

    func texts(_ recovered: RecoveredLog) -> [String] {
        recovered.records.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    @Test func whatAnOwnerAcknowledgedIsWhatTheNextOwnerRecoversAndAStaleOwnerIsFenced() async throws {
        try await withSharedCluster { cluster in
            let first = try await connectClient(to: cluster, first: 0, name: "first")
            let second = try await connectClient(to: cluster, first: 1, name: "second")
            let firstFailures = Failures()
            let secondFailures = Failures()

            let (old, nothing) = try await owner(first, node: "a", failures: firstFailures)
            #expect(nothing.records.isEmpty && nothing.snapshot == nil)
            let written = (1...50).map { "a\($0)" }
            let outcomes = await appendAll(written, to: old)
            #expect(outcomes == (1...50).map { .success(UInt64($0)) }, "completions in sequence order, all stored")
            #expect(old.nextSequence == 51)

            // The next owner replays everything acknowledged, in order, then appends after it.
            let (new, recovered) = try await owner(second, node: "b", failures: secondFailures)
            #expect(texts(recovered) == written)
            #expect(recovered.records.map(\.sequence) == (1...50).map { UInt64($0) })
            #expect(await appendAll(["b51"], to: new) == [.success(51)])

            // The old owner still believes the stream ends at 50: refused, and every later append too.
            let stale = await appendAll(["a51", "a52", "a53"], to: old)
            #expect(stale == [.failure(.closed), .failure(.closed), .failure(.closed)])
            #expect(firstFailures.all.count == 1)
            #expect(firstFailures.all.first?.contains("fenced") == true)
            #expect(await appendAll(["a54"], to: old) == [.failure(.closed)])
            #expect(firstFailures.all.count == 1, "the failure is reported once")

            let (_, final) = try await owner(first, node: "c", failures: Failures())
            #expect(texts(final) == written + ["b51"])
            #expect(secondFailures.all.isEmpty)
            await first.close()
            await second.close()
        }
    }

    /// The largest record the server writes, a purge of as many sessions as one purge forgets,
    /// is appended and recovered: a record is read back by `STREAM.MSG.GET`, whose answer
    /// carries it in base64 inside JSON and must fit one NATS message (1 MiB).
    @Test func theLargestRecordTheServerWritesIsRecovered() async throws {
        var random = SeededGenerator(seed: 11)
        let sessions = (0..<AccountStore.sessionsPurgedAtOnce).map { _ in BangbangCore.SessionID(high: random.next(), low: random.next()) }
        let purge = JournalEntry.account(.sessionsPurged(.init(sessions: sessions.sorted(), at: Timestamp(milliseconds: 1_796_099_188_971))))
        let record = purge.encoded()
        #expect(record.count * 4 / 3 + 4_096 < 1 << 20, "\(record.count) bytes")
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "largest")
            let (journal, _) = try await owner(connection, node: "a", failures: Failures())
            let outcome = await withCheckedContinuation { (done: CheckedContinuation<Result<UInt64, Journal.JournalError>, Never>) in
                journal.appendRecord(record) { done.resume(returning: $0) }
            }
            #expect(outcome == .success(1))
            let (_, recovered) = try await owner(connection, node: "b", failures: Failures())
            #expect(recovered.records.map(\.payload) == [record])
            await connection.close()
        }
    }

    /// Appends handed over from several threads at once: each gets its own sequence, in the
    /// order of the hand-over (one thread's appends keep their order), completions run in
    /// sequence order, and the stream holds exactly what was acknowledged.
    /// Closing completes what is not stored, and everything after, with `.closed`, still in order.
    @Test func appendsFromSeveralThreadsAreSequencedCompletedInOrderAndClosingEndsTheRest() async throws {
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "owner")
            let (journal, _) = try await owner(connection, node: "a", failures: Failures())
            let completed = Mutex<[(String, UInt64)]>([])
            let threads = 4
            let perThread = 150
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let remaining = Atomic(threads * perThread)
                for thread in 0..<threads {
                    DispatchQueue.global().async {
                        for index in 0..<perThread {
                            let text = "t\(thread)-\(index)"
                            journal.appendRecord(Array(text.utf8)) { result in
                                if case .success(let sequence) = result { completed.withLock { $0.append((text, sequence)) } }
                                if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                            }
                        }
                    }
                }
            }
            let outcomes = completed.withLock { $0 }
            #expect(outcomes.map(\.1) == (1...UInt64(threads * perThread)).map { $0 }, "every append stored, completed in sequence order")
            for thread in 0..<threads {
                let mine = outcomes.filter { $0.0.hasPrefix("t\(thread)-") }.map(\.0)
                #expect(mine == (0..<perThread).map { "t\(thread)-\($0)" }, "thread \(thread)'s appends kept their order")
            }
            #expect(journal.nextSequence == UInt64(threads * perThread) + 1)
            let (_, recovered) = try await owner(connection, node: "b", failures: Failures())
            #expect(texts(recovered) == outcomes.map(\.0), "the stream holds what was acknowledged, at its sequences")

            // Closing: the appends in flight and every later one complete with `.closed`, in order.
            let (closing, _) = try await owner(connection, node: "c", failures: Failures())
            let afterClose = Mutex<[String]>([])
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let remaining = Atomic(40)
                for index in 0..<40 {
                    if index == 20 { try? closing.close() }
                    closing.appendRecord(Array("c\(index)".utf8)) { result in
                        let said = switch result {
                        case .success(let sequence): "c\(index) stored at \(sequence)"
                        case .failure(let error): "c\(index) \(error)"
                        }
                        afterClose.withLock { $0.append(said) }
                        if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                    }
                }
            }
            let said = afterClose.withLock { $0 }
            #expect(said.count == 40)
            #expect(said.map { String($0.split(separator: " ")[0]) } == (0..<40).map { "c\($0)" },
                    "completions in the order of the appends")
            let refused = said.drop { $0.contains("stored at") }
            #expect(refused.count >= 20 && refused.allSatisfy { !$0.contains("stored at") }, "\(said)")
            await connection.close()
        }
    }

    /// Appends `payloads` all within one turn of the NATS connection's loop, so the journal
    /// starts them together; returns the outcomes in completion order.
    func appendInOneTurn(_ payloads: [[UInt8]], to journal: StreamJournal) async -> [Result<UInt64, Journal.JournalError>] {
        let outcomes = Mutex<[Result<UInt64, Journal.JournalError>]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            journal.partitionJournal.jetStream.connection.loop.execute {
                let remaining = Atomic(payloads.count)
                for payload in payloads {
                    journal.appendRecord(payload) { result in
                        outcomes.withLock { $0.append(result) }
                        if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                    }
                }
            }
        }
        return outcomes.withLock { $0 }
    }

    /// What a burst of commits costs the stream: one message, up to RecordBatch.maximumBytes, its
    /// records numbered on from those of a stream written one record per message before batches;
    /// the next owner reads both kinds back under the same numbers, and a snapshot covering a
    /// batch names the message that ends it.
    @Test func aBurstOfAppendsIsOneMessageAndItsRecordsKeepTheirNumbersAfterOnesStoredBeforeBatches() async throws {
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "batches")
            let plain = try await PartitionJournal.create(partition, in: JetStream(connection: connection))
            var last: UInt64 = 0
            for index in 1...5 { last = try await plain.append(Array("old\(index)".utf8), after: last) }

            let (journal, before) = try await owner(connection, node: "a", failures: Failures())
            #expect(texts(before) == (1...5).map { "old\($0)" })
            let burst = (6...105).map { Array("r\($0)".utf8) }
            #expect(await appendInOneTurn(burst, to: journal) == (6...105).map { .success(UInt64($0)) })
            var info = try await plain.jetStream.streamInfo(plain.streamName)
            #expect(info.lastSequence == 6, "a hundred records in one message")

            // Records bigger than a message's share: 5 of 100 KiB go as 2, 2 and 1.
            let large = (0..<5).map { index in [UInt8](repeating: UInt8(index), count: 100 * 1024) }
            #expect(await appendInOneTurn(large, to: journal) == (106...110).map { .success(UInt64($0)) })
            info = try await plain.jetStream.streamInfo(plain.streamName)
            #expect(info.lastSequence == 9)

            let (next, recovered) = try await owner(connection, node: "b", failures: Failures())
            #expect(recovered.records.map(\.sequence) == (1...110).map { UInt64($0) })
            #expect(recovered.records.prefix(105).map { String(decoding: $0.payload, as: UTF8.self) }
                    == (1...5).map { "old\($0)" } + (6...105).map { "r\($0)" })
            #expect(recovered.records.suffix(5).map(\.payload) == large)
            #expect(next.nextSequence == 111)

            // A snapshot through record 110 names message 9, and the stream is purged through it.
            #expect(await appendInOneTurn([Array("r111".utf8)], to: next) == [.success(111)])
            _ = try await offThePool { try next.storeSnapshot(Array("through 110".utf8), coveringThrough: 110, keepingRecordsAfter: 0) }
            let stored = try #require(try await SnapshotStore(objects: next.snapshots.objects).latest(of: partition))
            #expect(stored.sequence == 110 && stored.message == 9)
            #expect(try await firstRecordStored(in: plain) == 111)
            let (_, afterSnapshot) = try await owner(connection, node: "c", failures: Failures())
            #expect(afterSnapshot.snapshotSequence == 110 && texts(afterSnapshot) == ["r111"])
            #expect(afterSnapshot.records.map(\.sequence) == [111])
            await connection.close()
        }
    }

    /// A stream holding what this code never writes (a batch cut short, a header that is not a
    /// record number, a batch whose numbers repeat or skip) is refused by name at recovery, never
    /// read around: the node does not serve a state with a hole in it.
    @Test func aDamagedBatchInTheStreamIsRefusedAtRecovery() async throws {
        let damaged: [(header: String, payload: [UInt8], says: String)] = [
            ("2", Array(RecordBatch.encode([Array("r2".utf8), Array("r3".utf8)]).dropLast()), "cut short"),
            ("two", RecordBatch.encode([Array("r2".utf8)]), "not a record number"),
            ("1", RecordBatch.encode([Array("r1 again".utf8)]), "record 1 again"),
            ("5", RecordBatch.encode([Array("r5".utf8)]), "lacks records 2...4"),
        ]
        for (index, damage) in damaged.enumerated() {
            try await withSharedCluster { cluster in
                let connection = try await connectClient(to: cluster, name: "damage-\(index)")
                let (journal, _) = try await owner(connection, node: "a", failures: Failures())
                #expect(await appendInOneTurn([Array("r1".utf8)], to: journal) == [.success(1)])
                var headers = NATSHeaders()
                headers.set(RecordBatch.firstRecordHeader, damage.header)
                _ = try await journal.partitionJournal.jetStream.publish(journal.partitionJournal.subject, payload: damage.payload,
                                                                          headers: headers)
                do {
                    _ = try await owner(connection, node: "b", failures: Failures())
                    Issue.record("a stream with \(damage.says) was recovered")
                } catch {
                    #expect("\(error)".contains(damage.says), "\(error)")
                }
                await connection.close()
            }
        }
    }

    /// Commits that arrive one at a time while a message is unanswered wait for it and go out
    /// together in the next (group commit). The NATS server the owner talks to is frozen while
    /// they arrive, so the message before them stays unanswered however fast or slow the machine:
    /// the stream then holds exactly three messages (the first record, the one sent into the
    /// freeze, all the rest; one per record without the window), and each record completes at
    /// its own number, in order.
    @Test func appendsThatArriveWhileAMessageIsUnansweredGoOutTogether() async throws {
        try await withCluster { cluster in
            let connection = try await connectClient(to: cluster, first: 0, name: "group-commit")
            let (journal, _) = try await owner(connection, node: "a", failures: Failures())
            let records = 40
            let outcomes = Mutex<[Result<UInt64, Journal.JournalError>]>([])
            let complete: @Sendable (Result<UInt64, Journal.JournalError>) -> Void = { result in
                outcomes.withLock { $0.append(result) }
            }
            journal.appendRecord(Array("r1".utf8), completion: complete)
            try await eventually(timeoutSeconds: 20, "the first append completed") { outcomes.withLock { $0.count } == 1 }
            cluster.freeze(0)
            for index in 2...records {
                journal.appendRecord(Array("r\(index)".utf8), completion: complete)
                // Each record a turn of the loop of its own: without the window, a message each.
                try await Task.sleep(for: .milliseconds(2))
            }
            cluster.thaw(0)
            try await eventually(timeoutSeconds: 20, "every append completed") { outcomes.withLock { $0.count } == records }
            #expect(outcomes.withLock { $0 } == (1...records).map { .success(UInt64($0)) })
            let messages = try await journal.partitionJournal.lastSequence()
            #expect(messages == 3, "\(messages) messages for \(records) records")
            let (_, recovered) = try await owner(connection, node: "b", failures: Failures())
            #expect(texts(recovered) == (1...records).map { "r\($0)" })
            await connection.close()
        }
    }

    /// What batches save a take-over: the same records replayed from a stream of one record per
    /// message (as before batches) and from one of batches as a busy owner writes them (eight
    /// records a message). Release build:
    /// `REPLAY_BENCHMARK=20000 swift test -c release --build-path .build-rel -Xswiftc -enable-testing --filter StreamJournalIntegrationTests/measure`
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REPLAY_BENCHMARK"] != nil))
    func measureReplayOfSingleRecordsAndOfBatches() async throws {
        let count = Int(ProcessInfo.processInfo.environment["REPLAY_BENCHMARK"] ?? "") ?? 20_000
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "replay")
            let jetStream = JetStream(connection: connection)
            let snapshots = try await SnapshotStore.create(in: jetStream)
            let record = { (index: Int) in Array("record \(index) ".utf8) + [UInt8](repeating: 0x2A, count: 180) }
            let single = try await PartitionJournal.create(PartitionID(space: .boards, index: 1), in: jetStream)
            for start in stride(from: 0, to: count, by: 1_000) {
                let pending = try (start..<min(count, start + 1_000)).map { index in
                    try jetStream.startPublish(single.subject, payload: record(index))
                }
                for acknowledgement in pending { _ = try await acknowledgement.acknowledgement() }
            }
            let batched = try await PartitionJournal.create(PartitionID(space: .boards, index: 2), in: jetStream)
            let writer = StreamJournal(journal: batched, snapshots: snapshots, nodeID: "bench", end: JournalEnd(message: 0, record: 0),
                                       completionQueue: DispatchQueue(label: "bench.commits")) { _ in }
            for start in stride(from: 0, to: count, by: 8) {
                _ = await appendInOneTurn((start..<min(count, start + 8)).map(record), to: writer)
            }
            for journal in [single, batched] {
                let started = ContinuousClock.now
                let (recovered, end) = try await StreamJournal.recover(journal, from: snapshots)
                let elapsed = ContinuousClock.now - started
                #expect(recovered.records.count == count && end.record == UInt64(count))
                #expect(recovered.records.map(\.payload) == (0..<count).map(record))
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("StreamJournalIntegrationTests: replayed \(count) records from \(end.message) messages in "
                      + "\(String(format: "%.2f", seconds)) s (\(Int(Double(count) / seconds)) records/s)")
            }
            await connection.close()
        }
    }

    @Test func aSnapshotInTheObjectStorePlusTheStreamAfterItIsThePartition() async throws {
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "owner")
            let (journal, _) = try await owner(connection, node: "a", failures: Failures())
            // A snapshot is cut with no append in flight: record 8 ends a message.
            _ = await appendAll((1...8).map { "r\($0)" }, to: journal)
            _ = await appendInOneTurn((9...10).map { Array("r\($0)".utf8) }, to: journal)
            let stored = try await offThePool {
                try journal.storeSnapshot(Array("state through 8".utf8), coveringThrough: 8, keepingRecordsAfter: 0)
            }
            #expect(stored.location == "bb-snapshots/p0")
            #expect(try await firstRecordStored(in: journal.partitionJournal) == 9, "purged through the snapshot")
            // A cut inside a message is refused, and stores nothing.
            #expect(throws: (any Error).self) {
                try journal.storeSnapshot(Array("state through 9".utf8), coveringThrough: 9, keepingRecordsAfter: 0)
            }

            let (next, recovered) = try await owner(connection, node: "b", failures: Failures())
            #expect(recovered.snapshotSequence == 8)
            #expect(recovered.snapshot.map { String(decoding: $0, as: UTF8.self) } == "state through 8")
            #expect(texts(recovered) == ["r9", "r10"])
            #expect(next.nextSequence == 11)
            await connection.close()
        }
    }

    /// An owner that lost the partition and stores its snapshot late never puts it in place of
    /// the next owner's: the stream is purged through the newer one, and the older one, with
    /// the records after it gone, would leave the partition unrecoverable. Written before the
    /// next owner's first snapshot, it is replaced by that one.
    @Test func aLateSnapshotOfAnOwnerThatLostThePartitionNeverReplacesANewerOne() async throws {
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "owner")
            let (old, _) = try await owner(connection, node: "a", failures: Failures())
            for burst in [1...8, 9...9, 10...10] { _ = await appendAll(burst.map { "r\($0)" }, to: old) }
            // The next owner takes over and appends; the old one, paused, has not noticed.
            let (new, _) = try await owner(connection, node: "b", failures: Failures())
            for burst in [11...14, 15...15] { _ = await appendAll(burst.map { "r\($0)" }, to: new) }

            // The old owner's late snapshot lands before the new owner's first: it may stand (the
            // stream still holds everything after it), and the new owner's replaces it.
            _ = try await offThePool { try old.storeSnapshot(Array("a through 8".utf8), coveringThrough: 8, keepingRecordsAfter: 0) }
            _ = try await offThePool { try new.storeSnapshot(Array("b through 14".utf8), coveringThrough: 14, keepingRecordsAfter: 0) }
            #expect(try await firstRecordStored(in: new.partitionJournal) == 15)

            // Another late one is refused, and nothing is purged or replaced.
            await #expect(throws: (any Error).self) {
                _ = try await offThePool { try old.storeSnapshot(Array("a through 9".utf8), coveringThrough: 9, keepingRecordsAfter: 0) }
            }
            let (_, recovered) = try await owner(connection, node: "c", failures: Failures())
            #expect(recovered.snapshot.map { String(decoding: $0, as: UTF8.self) } == "b through 14")
            #expect(texts(recovered) == ["r15"])
            await connection.close()
        }
    }

    /// `kill -9` of the NATS server the owner is connected to, with appends in flight: the owner
    /// publishes them again with their message ids and keeps the partition; every append is
    /// acknowledged at its own sequence and stored once, in order.
    @Test func appendsInFlightWhenTheOwnersNATSServerDiesAreStoredOnceInOrderAndTheOwnerKeepsWriting() async throws {
        try await withCluster { cluster in
            let connection = try await connectClient(to: cluster, first: 0, name: "owner")
            let failures = Failures()
            let (journal, _) = try await owner(connection, node: "a", failures: failures)
            let victim = try #require(connection.connectedServer.flatMap { cluster.index(of: $0) })
            var written: [String] = []
            var outcomes: [Result<UInt64, Journal.JournalError>] = []
            for round in 0..<12 {
                let texts = (0..<50).map { "r\(round)-\($0)" }
                written += texts
                let appending = Task { await appendAll(texts, to: journal) }
                if round == 4 {
                    try await Task.sleep(for: .milliseconds(2))
                    cluster.kill(victim)
                }
                outcomes += await appending.value
            }
            #expect(failures.all.isEmpty, "the owner gave up: \(failures.all)")
            #expect(outcomes == (1...written.count).map { .success(UInt64($0)) })
            #expect(connection.reconnectCount >= 1)

            // A replay needs the leaders of the journal's stream and of the snapshot bucket's,
            // either of which may have been on the server that died: read again while the
            // cluster elects them.
            let reader = try await connectClient(to: cluster, first: (victim + 1) % 3, name: "reader")
            let deadline = ContinuousClock.now + .seconds(60)
            var recovered: RecoveredLog?
            while recovered == nil {
                do {
                    recovered = try await owner(reader, node: "b", failures: Failures()).1
                } catch where ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
            #expect(recovered.map(texts) == written, "each append stored once, in order")
            await connection.close()
            await reader.close()
        }
    }
}
