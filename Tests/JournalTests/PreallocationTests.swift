// Zero-filled space ahead of the records (`preallocationSize`): recovery reads the zeros as the
// end of the written part, a torn write inside them is still a torn tail, and a disk too full
// for a chunk of zeros still takes plain appends.
import Foundation
import Platform
import Glibc
import Testing
@testable import Journal

@Suite struct PreallocationTests {
    private func preallocating(_ size: Int = 4096, segmentSize: Int = 64 << 20, faults: FaultScript? = nil) -> JournalConfiguration {
        var configuration = configuration(segmentSize: segmentSize, faults: faults)
        configuration.preallocationSize = size
        return configuration
    }

    @Test func zerosAfterTheRecordsAreTheEndOfTheSegmentNotDamage() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, preallocating())
        let payloads = try await appendRecords(journal, count: 5)
        try journal.close()
        let name = try #require(directory.segmentNames().first)
        let bytes = directory.bytes(of: name)
        #expect(bytes.count == 4096, "the segment is filled to the next chunk")
        let end = try #require(recordOffsets(in: bytes).prefix(6).last)
        #expect(bytes[end...].allSatisfy { $0 == 0 })

        let (reopened, recovery) = try openJournal(directory, preallocating())
        #expect(recovery.records.map(\.payload) == payloads)
        #expect(recovery.report.warnings.isEmpty && recovery.report.bytesTruncated == 0)
        // Writing goes on right after the last record, over the zeros.
        #expect(try await appendAndWait(reopened, [9, 9]).get() == 6)
        try reopened.close()
        let (_, again) = try openJournal(directory, preallocating())
        #expect(again.records.map(\.payload) == payloads + [[9, 9]])
    }

    @Test func aTornWriteInsideTheZerosIsCutAsATornTail() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, preallocating())
        let payloads = try await appendRecords(journal, count: 3)
        try journal.close()
        let name = try #require(directory.segmentNames().first)
        var bytes = directory.bytes(of: name)
        let offsets = recordOffsets(in: bytes)
        let second = offsets[1], third = offsets[2]
        // Half of a fourth record after the third: what a crash mid-write leaves.
        let end = third + (third - second)
        bytes.replaceSubrange(end..<end + 10, with: bytes[second..<second + 10])
        directory.write(bytes, to: name)

        let (_, recovery) = try openJournal(directory, preallocating())
        #expect(recovery.records.map(\.payload) == payloads)
        #expect(recovery.report.bytesTruncated == bytes.count - end)
        #expect(recovery.report.warnings.count == 1)
        #expect(directory.size(of: name) == end)
    }

    @Test func finishedSegmentsHoldTheirRecordsOnly() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, preallocating(2048, segmentSize: 1024))
        let payloads = try await appendRecords(journal, count: 60, length: 100)
        try journal.close()
        let names = directory.segmentNames()
        #expect(names.count > 3)
        for name in names.dropLast() {
            let bytes = directory.bytes(of: name)
            #expect(recordOffsets(in: bytes).last.map { $0 + RecordFormat.headerSize + 100 } == bytes.count, "\(name)")
        }
        #expect(directory.size(of: names.last!) % 2048 == 0, "the active segment keeps its zeros")
        let (_, recovery) = try openJournal(directory, preallocating(2048, segmentSize: 1024))
        #expect(recovery.records.map(\.payload) == payloads)
        #expect(recovery.report.warnings.isEmpty)
    }

    @Test func zerosAtTheEndOfAnEarlierSegmentAreReadAsItsEnd() async throws {
        // Only a crash during a roll leaves them there; recovery must not take them for damage.
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 1024))
        let payloads = try await appendRecords(journal, count: 30, length: 100)
        try journal.close()
        let first = try #require(directory.segmentNames().first)
        directory.write(directory.bytes(of: first) + [UInt8](repeating: 0, count: 3000), to: first)
        let (_, recovery) = try openJournal(directory, configuration(segmentSize: 1024))
        #expect(recovery.records.map(\.payload) == payloads)
        #expect(recovery.report.warnings.isEmpty)
    }

    @Test func whenFillingFailsTheBatchIsAppendedPlainly() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let faults = FaultScript()
        let (journal, _) = try openJournal(directory, preallocating(faults: faults))
        let first = try await appendRecords(journal, count: 1)
        let name = try #require(directory.segmentNames().first)
        #expect(directory.size(of: name) == 4096)
        // The next batch outgrows the zeroed space, and filling more of it fails (no room for a
        // chunk): the zeros are cut off and the batch is written as a plain append.
        faults.inject([.fail(.noSpace)], into: .write)
        let big = [UInt8](repeating: 7, count: 5000)
        let sequence = try await appendAndWait(journal, big).get()
        let end = SegmentHeader.size + 2 * RecordFormat.headerSize + first[0].count + big.count
        #expect(directory.size(of: name) == end)
        // Until the next segment, appends stay plain.
        #expect(try await appendAndWait(journal, [1]).get() == sequence + 1)
        #expect(directory.size(of: name) == end + RecordFormat.headerSize + 1)
        // A batch that cannot be written at all still fails as before.
        faults.inject([.fail(.noSpace)], into: .write)
        #expect(await appendAndWait(journal, [2]) == .failure(.noSpace))
        #expect(directory.size(of: name) == end + RecordFormat.headerSize + 1)
        try journal.close()
        let (_, recovery) = try openJournal(directory, preallocating())
        #expect(recovery.records.map(\.payload) == first + [big, [1]])
        #expect(recovery.records.last?.sequence == sequence + 1)
        #expect(recovery.report.warnings.isEmpty)
    }
}
