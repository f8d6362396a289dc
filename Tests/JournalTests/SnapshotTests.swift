import Foundation
import Testing
@testable import Journal

@Suite struct SnapshotTests {
    private let stateAt5 = Array("state after five".utf8) + [UInt8](repeating: 7, count: 500)
    private let stateAt10 = Array("state after ten".utf8) + [UInt8](repeating: 9, count: 500)

    @Test func snapshotPlusLaterRecordsIsWhatRecoveryReturns() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        let payloads = try await appendRecords(journal, count: 8)
        let report = try journal.writeSnapshot(contents: stateAt5, coveringThrough: 5)
        #expect(report.coveredSequence == 5)
        #expect(report.contentBytes == stateAt5.count)
        #expect(report.isCompressed)
        #expect(report.fileBytes < stateAt5.count)
        #expect(report.fileBytes == directory.size(of: report.file))
        #expect(report.duration >= .zero)
        let later = try await appendRecords(journal, count: 2, startingAt: 9)
        try journal.close()

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.snapshot == stateAt5)
        #expect(recovery.report.snapshotFile == "snapshot-00000000000000000005.snap")
        #expect(recovery.report.snapshotSequence == 5)
        #expect(recovery.records.map(\.sequence) == [6, 7, 8, 9, 10])
        #expect(recovery.records.map(\.payload) == Array(payloads[5...]) + later)
        #expect(recovery.report.recordsReplayed == 5)
        #expect(recovery.report.lastSequence == 10)
    }

    @Test func snapshotCoveringEverythingLeavesNoRecordsToReplay() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(compressesSnapshots: false))
        _ = try await appendRecords(journal, count: 3)
        let report = try journal.writeSnapshot(contents: [1, 2, 3], coveringThrough: 3)
        #expect(!report.isCompressed)
        try journal.close()
        let (reopened, recovery) = try openJournal(directory)
        #expect(recovery.snapshot == [1, 2, 3])
        #expect(recovery.records.isEmpty)
        #expect(try await appendAndWait(reopened, [4]).get() == 4)
        try reopened.close()
    }

    @Test func corruptNewestSnapshotFallsBackToThePreviousOnePlusJournal() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 100))
        let payloads = try await appendRecords(journal, count: 12)
        try journal.writeSnapshot(contents: stateAt5, coveringThrough: 5)
        try journal.writeSnapshot(contents: stateAt10, coveringThrough: 10)
        try journal.close()
        let newest = DataDirectory.snapshotName(covered: 10)
        var bytes = directory.bytes(of: newest)
        bytes[bytes.count / 2] ^= 0xFF
        directory.write(bytes, to: newest)

        let (reopened, recovery) = try openJournal(directory, configuration(segmentSize: 100))
        #expect(recovery.snapshot == stateAt5)
        #expect(recovery.report.snapshotSequence == 5)
        #expect(recovery.records.map(\.sequence) == Array(6...12))
        #expect(recovery.records.map(\.payload) == Array(payloads[5...]))
        let warning = try #require(recovery.report.warnings.first)
        #expect(warning.contains(newest) && warning.contains("checksum mismatch") && warning.contains("fell back"), "\(warning)")
        #expect(directory.names().contains(newest + ".corrupt"))
        #expect(!directory.snapshotNames().contains(newest))
        // A new snapshot after the fallback pairs with the good one, not the damaged one.
        #expect(try await appendAndWait(reopened, [0]).get() == 13)
        try reopened.close()
    }

    @Test func corruptOnlySnapshotFallsBackToTheWholeJournal() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        _ = try await appendRecords(journal, count: 4)
        try journal.writeSnapshot(contents: stateAt5, coveringThrough: 3)
        try journal.close()
        let name = DataDirectory.snapshotName(covered: 3)
        directory.write(Array(directory.bytes(of: name).prefix(20)), to: name)

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.snapshot == nil)
        #expect(recovery.records.map(\.sequence) == [1, 2, 3, 4])
        #expect(recovery.report.warnings.first?.contains("shorter than the snapshot header") == true)
    }

    @Test func segmentsSmallerThanTheSegmentSizeAreStillDeletedAfterTwoSnapshots() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 1 << 30))
        _ = try await appendRecords(journal, count: 5)
        #expect(directory.segmentNames().count == 1)

        // Each cut starts a new segment at the next batch, however small the current one is.
        let first = try journal.writeSnapshot(contents: stateAt5, coveringThrough: 5)
        #expect(first.deletedSegments.isEmpty)
        _ = try await appendRecords(journal, count: 5)
        #expect(directory.segmentNames().count == 2)
        let second = try journal.writeSnapshot(contents: stateAt10, coveringThrough: 10)
        #expect(second.deletedSegments == [DataDirectory.segmentName(base: 1)])
        _ = try await appendRecords(journal, count: 5)
        let third = try journal.writeSnapshot(contents: [3], coveringThrough: 15)
        #expect(third.deletedSegments == [DataDirectory.segmentName(base: 6)])
        // On disk: the segment after the older of the two kept snapshots, nothing before.
        #expect(directory.segmentNames() == [DataDirectory.segmentName(base: 11)])
        try journal.close()

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.report.snapshotSequence == 15 && recovery.snapshot == [3])
        #expect(recovery.records.isEmpty)
    }

    @Test func segmentsAfterTheCallersBoundAreKeptUntilItMoves() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory, configuration(segmentSize: 1 << 30))
        _ = try await appendRecords(journal, count: 5)
        try journal.writeSnapshot(contents: stateAt5, coveringThrough: 5, keepingRecordsAfter: 0)
        _ = try await appendRecords(journal, count: 5)
        // Both snapshots cover segment 1, but the other store covers only through record 4.
        let held = try journal.writeSnapshot(contents: stateAt10, coveringThrough: 10, keepingRecordsAfter: 4)
        #expect(held.deletedSegments.isEmpty)
        _ = try await appendRecords(journal, count: 5)
        // Now it covers through 7: segment 1 (records 1–5) goes; segment 6 (6–10), which the
        // older kept snapshot alone would let go, stays for record 8 onwards.
        let moved = try journal.writeSnapshot(contents: [3], coveringThrough: 15, keepingRecordsAfter: 7)
        #expect(moved.deletedSegments == [DataDirectory.segmentName(base: 1)])
        #expect(directory.segmentNames() == [DataDirectory.segmentName(base: 6), DataDirectory.segmentName(base: 11)])
        try journal.close()

        let (_, recovery) = try openJournal(directory)
        #expect(recovery.report.snapshotSequence == 15 && recovery.snapshot == [3])
    }

    @Test func snapshotDeletesSegmentsCoveredByThePreviousSnapshot() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let config = configuration(segmentSize: 100)
        let (journal, _) = try openJournal(directory, config)
        let payloads = try await appendRecords(journal, count: 30)
        let segmentsBefore = directory.segmentNames()
        #expect(segmentsBefore.count >= 10)

        // The first snapshot has no predecessor to fall back to, so the whole journal stays.
        let first = try journal.writeSnapshot(contents: stateAt5, coveringThrough: 10)
        #expect(first.deletedSegments.isEmpty)
        #expect(directory.segmentNames() == segmentsBefore)

        let second = try journal.writeSnapshot(contents: stateAt10, coveringThrough: 25)
        #expect(!second.deletedSegments.isEmpty)
        let remaining = directory.segmentNames()
        #expect(Set(remaining) == Set(segmentsBefore).subtracting(second.deletedSegments))
        // Every deleted segment held only sequences up to 10; the first remaining one starts by 11.
        let firstRemainingBase = try #require(DataDirectory.sequence(in: remaining[0], prefix: "journal-", suffix: ".log"))
        #expect(firstRemainingBase <= 11)
        #expect(firstRemainingBase > 1)

        let third = try journal.writeSnapshot(contents: [3], coveringThrough: 28)
        #expect(third.deletedSnapshots == [DataDirectory.snapshotName(covered: 10)])
        #expect(directory.snapshotNames() == [DataDirectory.snapshotName(covered: 25), DataDirectory.snapshotName(covered: 28)])
        try journal.close()

        // Damaging the newest still leaves enough journal behind the previous one.
        let newest = DataDirectory.snapshotName(covered: 28)
        var bytes = directory.bytes(of: newest)
        bytes[SnapshotFormat.headerSize - 1] ^= 1
        directory.write(bytes, to: newest)
        let (_, recovery) = try openJournal(directory, config)
        #expect(recovery.snapshot == stateAt10)
        #expect(recovery.records.map(\.payload) == Array(payloads[25...]))
    }

    @Test func snapshotFileIsSelfChecking() {
        let contents = [UInt8](repeating: 1, count: 1000) + payload(1, length: 100)
        for compress in [false, true] {
            let encoded = SnapshotFormat.encode(contents: contents, coveredSequence: 77, compress: compress)
            let decoded = try? SnapshotFormat.decode(encoded, maximumSize: 1 << 20).get()
            #expect(decoded?.contents == contents)
            #expect(decoded?.coveredSequence == 77)
            #expect(decoded?.isCompressed == compress)

            var flipped = encoded
            flipped[8] ^= 1 // the covered sequence
            #expect(SnapshotFormat.decode(flipped, maximumSize: 1 << 20) == .failure(.checksumMismatch))
            #expect(SnapshotFormat.decode(Array(encoded.dropLast()), maximumSize: 1 << 20)
                    == .failure(.lengthMismatch(expected: encoded.count - SnapshotFormat.headerSize, actual: encoded.count - SnapshotFormat.headerSize - 1)))
            #expect(SnapshotFormat.decode(encoded, maximumSize: 10) == .failure(.tooLarge(contents.count)))
        }
        var versioned = SnapshotFormat.encode(contents: [1], coveredSequence: 1, compress: false)
        versioned[4] = 9
        #expect(SnapshotFormat.decode(versioned, maximumSize: 100) == .failure(.unsupportedVersion(9)))
    }

    @Test func snapshotOfAnotherFormatVersionIsRefused() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        _ = try await appendRecords(journal, count: 2)
        let report = try journal.writeSnapshot(contents: [1], coveringThrough: 2)
        try journal.close()
        var bytes = directory.bytes(of: report.file)
        bytes[4] = 2
        directory.write(bytes, to: report.file)
        #expect(errorOf { try openJournal(directory) }
                == .unsupportedFormatVersion(file: directory.file(report.file), found: 2, supported: 1))
    }

    @Test func leftoverTemporarySnapshotIsRemovedAtOpen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        try journal.close()
        directory.write([1, 2, 3], to: "snapshot-00000000000000000009.snap.tmp")
        let (reopened, recovery) = try openJournal(directory)
        #expect(!directory.names().contains("snapshot-00000000000000000009.snap.tmp"))
        #expect(recovery.report.warnings.count == 1)
        #expect(recovery.snapshot == nil)
        try reopened.close()
    }
}

extension SnapshotFormat.Decoded: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.coveredSequence == rhs.coveredSequence && lhs.contents == rhs.contents && lhs.isCompressed == rhs.isCompressed
    }
}
