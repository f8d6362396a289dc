import Foundation
import Testing
@testable import Journal
import Crypto

@Suite struct RecoveryTests {
    /// A closed journal with `count` records in one segment; returns the segment's name and bytes.
    private func journalWithRecords(_ directory: TemporaryDirectory, count: Int) async throws -> (String, [UInt8]) {
        let (journal, _) = try openJournal(directory)
        _ = try await appendRecords(journal, count: count)
        try journal.close()
        let name = try #require(directory.segmentNames().first)
        return (name, directory.bytes(of: name))
    }

    @Test func recoveryTruncatesTornTailAtEveryByteOfTheLastRecord() async throws {
        let source = TemporaryDirectory()
        defer { source.remove() }
        let (name, segment) = try await journalWithRecords(source, count: 3)
        let lastStart = try #require(recordOffsets(in: segment).last)
        for cut in lastStart + 1..<segment.count {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
            directory.write(Array(segment[..<cut]), to: name)

            let (journal, recovery) = try openJournal(directory)
            #expect(recovery.records.map(\.sequence) == [1, 2], "cut at \(cut)")
            #expect(recovery.records.map(\.payload) == [payload(1), payload(2)])
            #expect(recovery.report.bytesTruncated == cut - lastStart, "cut at \(cut)")
            #expect(recovery.report.lastSequence == 2)
            let warning = try #require(recovery.report.warnings.first)
            #expect(warning.contains("offset \(lastStart)"), "\(warning)")
            #expect(warning.contains("truncated \(cut - lastStart) bytes"), "\(warning)")
            #expect(warning.contains("kept every record through sequence 2"), "\(warning)")
            #expect(directory.size(of: name) == lastStart)

            // The journal carries on from the cut.
            #expect(try await appendAndWait(journal, [7]).get() == 3)
            try journal.close()
            let (_, again) = try openJournal(directory)
            #expect(again.records.map(\.sequence) == [1, 2, 3])
            #expect(again.report.warnings.isEmpty)
        }
    }

    @Test func recoveryTruncatesLastRecordWithBadChecksum() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var (name, segment) = try await journalWithRecords(directory, count: 3)
        let lastStart = try #require(recordOffsets(in: segment).last)
        segment[segment.count - 1] ^= 0x01
        directory.write(segment, to: name)

        let (journal, recovery) = try openJournal(directory)
        #expect(recovery.records.map(\.sequence) == [1, 2])
        #expect(recovery.report.bytesTruncated == segment.count - lastStart)
        #expect(recovery.report.warnings.first?.contains("checksum mismatch") == true)
        try journal.close()
    }

    @Test func recoveryRefusesBadChecksumFollowedByIntactRecords() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var (name, segment) = try await journalWithRecords(directory, count: 3)
        let middle = recordOffsets(in: segment)[1]
        segment[middle + RecordFormat.headerSize + 3] ^= 0x40
        directory.write(segment, to: name)

        let error = errorOf { try openJournal(directory) }
        guard case .corruptJournal(let file, let offset, let detail)? = error else {
            Issue.record("expected corruptJournal, got \(String(describing: error))")
            return
        }
        #expect(file == directory.file(name))
        #expect(offset == middle)
        #expect(detail.contains("checksum mismatch"))
        #expect(error!.description.contains("refuses to start"))
        #expect(error!.description.contains("restore the data directory from a backup"))
        // Nothing was cut.
        #expect(directory.bytes(of: name) == segment)
    }

    @Test func recoveryRefusesCorruptLengthFollowedByIntactRecords() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var (name, segment) = try await journalWithRecords(directory, count: 3)
        let middle = recordOffsets(in: segment)[1]
        // A length pointing past the end of the file would look like a short payload.
        segment[middle + 2] = 0x7F
        directory.write(segment, to: name)

        let error = errorOf { try openJournal(directory) }
        guard case .corruptJournal(_, let offset, _)? = error else {
            Issue.record("expected corruptJournal, got \(String(describing: error))")
            return
        }
        #expect(offset == middle)
    }

    @Test func recoveryRefusesDamagedTailOfASegmentThatIsNotTheLast() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 100))
        _ = try await appendRecords(journal, count: 12)
        try journal.close()
        let segments = directory.segmentNames()
        #expect(segments.count >= 3)
        var first = directory.bytes(of: segments[0])
        first.removeLast(3)
        directory.write(first, to: segments[0])

        let error = errorOf { try openJournal(directory, configuration(segmentSize: 100)) }
        guard case .corruptJournal(let file, _, let detail)? = error else {
            Issue.record("expected corruptJournal, got \(String(describing: error))")
            return
        }
        #expect(file == directory.file(segments[0]))
        #expect(detail.contains("not the last"))
    }

    @Test func recoveryRefusesUnknownSegmentVersion() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var (name, segment) = try await journalWithRecords(directory, count: 2)
        segment[4] = 2
        directory.write(segment, to: name)

        let error = errorOf { try openJournal(directory) }
        #expect(error == .unsupportedFormatVersion(file: directory.file(name), found: 2, supported: 1))
        #expect(error?.description.contains("format version 2 but this server reads version 1") == true)
        #expect(directory.bytes(of: name) == segment)
    }

    @Test func recoveryRefusesFileWithoutSegmentMagic() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var (name, segment) = try await journalWithRecords(directory, count: 1)
        segment[0] = 0
        directory.write(segment, to: name)
        #expect(errorOf { try openJournal(directory) } == .notAJournalFile(file: directory.file(name)))
    }

    @Test func recoveryRemovesSegmentWithTornHeader() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 60))
        _ = try await appendRecords(journal, count: 4)
        try journal.close()
        // A crash while rolling leaves a new segment with part of its header.
        let torn = DataDirectory.segmentName(base: 5)
        directory.write(Array(SegmentHeader(baseSequence: 5).encoded().prefix(7)), to: torn)

        let (reopened, recovery) = try openJournal(directory, configuration(segmentSize: 60))
        #expect(recovery.records.map(\.sequence) == [1, 2, 3, 4])
        #expect(recovery.report.warnings.first?.contains("incomplete header") == true)
        #expect(try await appendAndWait(reopened, [1]).get() == 5)
        try reopened.close()
    }

    @Test func recoveryRefusesMissingFirstSegment() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 60))
        _ = try await appendRecords(journal, count: 6)
        try journal.close()
        try FileManager.default.removeItem(atPath: directory.file(directory.segmentNames()[0]))
        let error = errorOf { try openJournal(directory) }
        guard case .incompleteHistory? = error else {
            Issue.record("expected incompleteHistory, got \(String(describing: error))")
            return
        }
    }

    @Test func scannerFindsIntactRecordsBehindDamage() {
        var bytes = SegmentHeader(baseSequence: 1).encoded()
        let garbage: [UInt8] = [0xFF, 0x00, 0x13, 0x37, 0x01]
        bytes += garbage
        let clean = SegmentScan(bytes: bytes, previousSequence: 0, maximumRecordSize: 1024)
        #expect(clean.damage?.isFollowedByValidRecords == false)
        #expect(clean.validLength == SegmentHeader.size)

        let record: [UInt8] = [4, 5, 6]
        let checksum = record.withUnsafeBytes { RecordFormat.checksum(sequence: 9, payload: $0) }
        RecordFormat.append(sequence: 9, payload: record, checksum: checksum, to: &bytes)
        let damaged = SegmentScan(bytes: bytes, previousSequence: 0, maximumRecordSize: 1024)
        #expect(damaged.damage?.offset == SegmentHeader.size)
        #expect(damaged.damage?.isFollowedByValidRecords == true)
    }

    @Test func scannerRejectsSequenceThatDoesNotIncrease() {
        var bytes = SegmentHeader(baseSequence: 1).encoded()
        for sequence: UInt64 in [1, 2, 2] {
            let checksum = [UInt8]().withUnsafeBytes { RecordFormat.checksum(sequence: sequence, payload: $0) }
            RecordFormat.append(sequence: sequence, payload: [], checksum: checksum, to: &bytes)
        }
        let scan = SegmentScan(bytes: bytes, previousSequence: 0, maximumRecordSize: 1024)
        #expect(scan.records.map(\.sequence) == [1, 2])
        #expect(scan.damage?.kind == .sequenceOutOfOrder(found: 2, previous: 2))
    }

    @Test func combinedChecksumMatchesChecksumOverSequenceAndPayload() {
        let body = payload(3, length: 100)
        let direct = body.withUnsafeBytes { RecordFormat.checksum(sequence: 123_456, payload: $0) }
        let payloadChecksum = body.withUnsafeBytes { Crypto.Digest.crc32($0) }
        #expect(RecordFormat.checksum(sequence: 123_456, payloadChecksum: payloadChecksum, payloadLength: body.count) == direct)
    }
}
