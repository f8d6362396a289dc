import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Journal

@Suite struct JournalAppendTests {
    @Test func recordsSurviveReopenAcrossSeveralSegments() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, first) = try openJournal(directory, configuration(segmentSize: 200))
        #expect(first.records.isEmpty)
        #expect(first.snapshot == nil)
        let payloads = try await appendRecords(journal, count: 40)
        try journal.close()
        #expect(directory.segmentNames().count >= 4)
        #expect(journal.statistics.segmentsCreated == directory.segmentNames().count - 1)

        let (reopened, recovery) = try openJournal(directory, configuration(segmentSize: 200))
        #expect(recovery.records.map(\.payload) == payloads)
        #expect(recovery.records.map(\.sequence) == Array(1...40))
        #expect(recovery.report.bytesTruncated == 0)
        #expect(recovery.report.warnings.isEmpty)
        #expect(recovery.report.lastSequence == 40)
        let next = try await appendAndWait(reopened, [1, 2, 3]).get()
        #expect(next == 41)
        try reopened.close()
    }

    @Test func appendReturnsTheSequenceBeforeTheCompletion() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        let gate = DispatchSemaphore(value: 0)
        let completed = Mutex<[UInt64]>([])
        let first = journal.append([1]) { result in
            gate.wait()
            completed.withLock { $0.append(try! result.get()) }
        }
        let second = journal.append([2]) { result in completed.withLock { $0.append(try! result.get()) } }
        #expect(first == 1)
        #expect(second == 2)
        #expect(completed.withLock { $0 }.isEmpty)
        gate.signal()
        try journal.close()
        #expect(completed.withLock { $0 } == [1, 2])
    }

    @Test func concurrentAppendsShareFewSyncsAndKeepSequenceOrder() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        var settings = configuration(faults: faults)
        // What a server's metrics are told of each batch.
        let observed = Mutex<[(records: Int, seconds: Double)]>([])
        settings.batchObserver = { records, seconds in observed.withLock { $0.append((records, seconds)) } }
        let (journal, _) = try openJournal(directory, settings)
        // Hold the first batch's fdatasync so every other append lands while it is in flight.
        let gate = DispatchSemaphore(value: 0)
        faults.holdNextSync(until: gate)
        let count = 2000
        let results = Mutex<[UInt64: Result<UInt64, JournalError>]>([:])
        let done = DispatchGroup()
        let sequences = Mutex<[UInt64: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            done.enter()
            let sequence = journal.append(payload(index)) { result in
                results.withLock { $0[try! result.get()] = result }
                done.leave()
            }
            sequences.withLock { $0[sequence] = index }
        }
        gate.signal()
        done.wait()
        let statistics = journal.statistics
        try journal.close()

        #expect(results.withLock { $0.count } == count)
        #expect(results.withLock { $0.values.allSatisfy { (try? $0.get()) != nil } })
        #expect(Set(sequences.withLock { $0.keys }) == Set(1...UInt64(count)))
        #expect(statistics.syncs <= 4, "expected a handful of group commits, got \(statistics.syncs) syncs for \(count) appends")
        #expect(statistics.batches == statistics.syncs)
        let batches = observed.withLock { $0 }
        #expect(batches.count == statistics.batches && batches.reduce(0) { $0 + $1.records } == count)
        #expect(batches.allSatisfy { $0.records >= 1 && $0.seconds >= 0 })

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.sequence) == Array(1...UInt64(count)))
        let indexBySequence = sequences.withLock { $0 }
        for record in recovery.records {
            #expect(record.payload == payload(indexBySequence[record.sequence]!))
        }
    }

    @Test func completionsRunInSequenceOrder() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        let order = Mutex<[UInt64]>([])
        DispatchQueue.concurrentPerform(iterations: 500) { index in
            journal.append(payload(index)) { result in order.withLock { $0.append(try! result.get()) } }
        }
        try journal.close()
        #expect(order.withLock { $0 } == Array(1...500))
    }

    @Test func intervalPolicyAcknowledgesAfterWriteAndSyncsLater() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A long interval, so the five acknowledged writes certainly fall inside one of them
        // even on a loaded machine (each is acknowledged after its write, not after a sync).
        let (journal, _) = try openJournal(directory, configuration(.interval(milliseconds: 1_000)))
        let payloads = try await appendRecords(journal, count: 5)
        #expect(journal.statistics.batches == 5)
        // The deferred sync runs on the journal's queue within the interval; poll, no timing assertion.
        #expect(await eventually { journal.statistics.syncs >= 1 })
        #expect(journal.statistics.syncs < 5)
        try journal.close()
        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.payload) == payloads)
    }

    @Test func neverPolicySyncsOnlyAtClose() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(.never))
        let payloads = try await appendRecords(journal, count: 10)
        #expect(journal.statistics.syncs == 0)
        try journal.close()
        #expect(journal.statistics.syncs == 1)
        let (_, recovery) = try openJournal(directory, configuration(.never))
        #expect(recovery.records.map(\.payload) == payloads)
    }

    @Test func appendAfterCloseFailsWithClosed() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        try journal.close()
        let result = await appendAndWait(journal, [1])
        #expect(throws: JournalError.closed) { try result.get() }
        #expect(journal.append([2]) { _ in } == 0)
        try journal.close()
    }

    @Test func emptyPayloadRoundTrips() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        _ = try await appendAndWait(journal, []).get()
        _ = try await appendAndWait(journal, [9]).get()
        try journal.close()
        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records == [JournalRecord(sequence: 1, payload: []), JournalRecord(sequence: 2, payload: [9])])
    }
}
