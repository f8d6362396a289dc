#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Platform
import Synchronization
import Testing
@testable import Journal

@Suite struct FaultInjectionTests {
    private func activeSegmentSize(_ directory: TemporaryDirectory) -> Int {
        directory.size(of: directory.segmentNames().last!)
    }

    @Test func noSpaceOnWriteFailsTheAppendAndLeavesNoPartialRecord() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(faults: faults))
        let kept = try await appendRecords(journal, count: 2)
        let sizeBefore = activeSegmentSize(directory)

        // Part of the record reaches the file, then the disk fills up.
        faults.inject([.limitBytes(5), .fail(.noSpace)], into: .write)
        let failed = await appendAndWait(journal, payload(99))
        #expect(throws: JournalError.noSpace) { try failed.get() }
        #expect(activeSegmentSize(directory) == sizeBefore)

        // Space is back.
        let later = payload(100)
        #expect(try await appendAndWait(journal, later).get() == 4)
        try journal.close()
        #expect(journal.statistics.failedBatches == 1)

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.sequence) == [1, 2, 4])
        #expect(recovery.records.map(\.payload) == kept + [later])
        #expect(recovery.report.warnings.isEmpty)
    }

    @Test func faultsInjectedIntoOneJournalLeaveAnotherInTheSameProcessAlone() async throws {
        let fullDirectory = TemporaryDirectory()
        let healthyDirectory = TemporaryDirectory()
        defer {
            fullDirectory.remove()
            healthyDirectory.remove()
        }
        let isDiskFull = Mutex(false)
        var fullDisk = configuration()
        fullDisk.simulateFullDisk(when: { isDiskFull.withLock { $0 } })
        let (full, _) = try openJournal(fullDirectory, fullDisk)
        let (healthy, _) = try openJournal(healthyDirectory)
        isDiskFull.withLock { $0 = true }

        #expect(await appendAndWait(full, payload(1)) == .failure(.noSpace))
        #expect(try await appendAndWait(healthy, payload(1)).get() == 1)
        try healthy.close()
        isDiskFull.withLock { $0 = false }
        try full.close()
    }

    @Test func noSpaceOnSyncFailsTheAppendAndTruncatesTheBatch() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(faults: faults))
        let kept = try await appendRecords(journal, count: 3)
        let sizeBefore = activeSegmentSize(directory)

        faults.inject([.fail(.noSpace)], into: .sync)
        let failed = await appendAndWait(journal, payload(50))
        #expect(throws: JournalError.noSpace) { try failed.get() }
        #expect(activeSegmentSize(directory) == sizeBefore)

        let later = payload(51)
        #expect(try await appendAndWait(journal, later).get() == 5)
        try journal.close()
        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.sequence) == [1, 2, 3, 5])
        #expect(recovery.records.map(\.payload) == kept + [later])
    }

    @Test func ioErrorOnWriteIsReportedWithItsErrno() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(faults: faults))
        faults.inject([.fail(.ioError)], into: .write)
        let failed = await appendAndWait(journal, [1])
        #expect(throws: JournalError.io(EIO)) { try failed.get() }
        #expect(try await appendAndWait(journal, [2]).get() == 2)
        try journal.close()
    }

    @Test func failedSyncFailsEveryAppendOfItsBatchAndNothingAfter() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(faults: faults))
        let gate = DispatchSemaphore(value: 0)
        let arrived = DispatchSemaphore(value: 0)
        faults.holdNextSync(until: gate, arrived: arrived)
        faults.inject([nil, .fail(.ioError)], into: .sync)

        let results = Mutex<[UInt64: Result<UInt64, JournalError>]>([:])
        let done = DispatchGroup()
        for index in 1...21 {
            if index == 2 { arrived.wait() } // record 1 is alone in the batch being synced
            done.enter()
            let sequence = journal.append(payload(index)) { result in
                results.withLock { $0[UInt64(index)] = result }
                done.leave()
            }
            #expect(sequence == UInt64(index))
        }
        gate.signal()
        done.wait()
        let outcome = results.withLock { $0 }
        #expect((try? outcome[1]!.get()) == 1)
        for sequence in 2...UInt64(21) {
            #expect(throws: JournalError.io(EIO)) { try outcome[sequence]!.get() }
        }
        #expect(journal.statistics.failedBatches == 1)
        #expect(try await appendAndWait(journal, payload(22)).get() == 22)
        try journal.close()

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.sequence) == [1, 22])
        #expect(recovery.records.map(\.payload) == [payload(1), payload(22)])
    }

    @Test func failedSegmentRollFailsTheBatchAndIsRetried() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let config = configuration(segmentSize: 60, faults: faults)
        let (journal, _) = try openJournal(directory, config)
        let first = try await appendRecords(journal, count: 2)
        let segmentsBefore = directory.segmentNames()

        faults.inject([.fail(.noSpace)], into: .open)
        let failed = await appendAndWait(journal, payload(3))
        #expect(throws: JournalError.noSpace) { try failed.get() }
        #expect(directory.segmentNames() == segmentsBefore)

        let later = try await appendRecords(journal, count: 2, startingAt: 4)
        try journal.close()
        #expect(directory.segmentNames().count > segmentsBefore.count)
        let (_, recovery) = try openJournal(directory, config)
        #expect(recovery.records.map(\.sequence) == [1, 2, 4, 5])
        #expect(recovery.records.map(\.payload) == first + later)
    }

    @Test func failedTruncationAfterAFailedWriteStopsFurtherAppends() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(faults: faults))
        _ = try await appendRecords(journal, count: 1)
        faults.inject([.limitBytes(3), .fail(.ioError)], into: .write)
        faults.inject([.fail(.ioError)], into: .truncate)
        let failed = await appendAndWait(journal, [1])
        #expect(throws: JournalError.io(EIO)) { try failed.get() }
        let refused = await appendAndWait(journal, [2])
        #expect(throws: JournalError.io(EIO)) { try refused.get() }
        try journal.close()

        // The stray bytes are a torn tail to recovery: cut, and the first record kept.
        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.sequence) == [1])
        #expect(recovery.report.bytesTruncated == 3)
    }

    @Test func failedFinalSyncIsReportedByClose() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(.never, faults: faults))
        _ = try await appendRecords(journal, count: 2)
        faults.inject([.fail(.ioError)], into: .sync)
        #expect(throws: JournalError.io(EIO)) { try journal.close() }
    }

    @Test func shortWritesAreCompletedTransparently() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, configuration(faults: faults))
        faults.inject([.limitBytes(1), .limitBytes(7), .limitBytes(2)], into: .write)
        let bytes = payload(1, length: 40)
        #expect(try await appendAndWait(journal, bytes).get() == 1)
        try journal.close()
        let (_, recovery) = try openJournal(directory)
        #expect(recovery.records == [JournalRecord(sequence: 1, payload: bytes)])
    }
}
