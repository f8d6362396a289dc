import Foundation
import Platform
import Testing
@testable import Journal

@Suite struct DataDirectoryTests {
    @Test func missingDirectoryIsCreatedWithParents() throws {
        let root = TemporaryDirectory()
        defer { root.remove() }
        let nested = root.path + "/a/b/data"
        let (journal, recovery) = try WriteAheadLog.open(directory: nested)
        #expect(recovery.records.isEmpty)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: nested, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(FileManager.default.fileExists(atPath: nested + "/LOCK"))
        try journal.close()
    }

    @Test func aDirectoryHoldsAJournalOnceASegmentOrASnapshotIsInIt() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(!WriteAheadLog.holdsJournal(in: directory.path), "a directory that does not exist")
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        directory.write([1], to: "archive.sqlite")
        directory.write([1], to: "LOCK")
        directory.write([1], to: "journal-12.log")
        #expect(!WriteAheadLog.holdsJournal(in: directory.path), "only other files, and a name that is not a segment's")
        directory.write([1], to: DataDirectory.snapshotName(covered: 7))
        #expect(WriteAheadLog.holdsJournal(in: directory.path))
        let other = TemporaryDirectory()
        defer { other.remove() }
        let (journal, _) = try openJournal(other)
        try journal.close()
        #expect(WriteAheadLog.holdsJournal(in: other.path), "a journal once opened has its first segment")
    }

    @Test func secondOpenOfTheSameDirectoryIsRefusedUntilClose() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (journal, _) = try openJournal(directory)
        let error = errorOf { try openJournal(directory) }
        #expect(error == .directoryLocked(path: directory.path))
        #expect(error?.description.contains("locked by another running server") == true)
        try journal.close()
        let (again, _) = try openJournal(directory)
        try again.close()
    }

    @Test func aFileWhereTheDirectoryShouldBeIsRefused() throws {
        let root = TemporaryDirectory()
        defer { root.remove() }
        try FileManager.default.createDirectory(atPath: root.path, withIntermediateDirectories: true)
        root.write([1, 2, 3], to: "plain")
        let error = errorOf { try WriteAheadLog.open(directory: root.file("plain")) }
        #expect(error == .notADirectory(path: root.file("plain")))
        #expect(error?.description.contains("not a directory") == true)
    }

    @Test(.enabled(if: getuid() != 0, "root ignores permission bits"))
    func unwritableDirectoryIsReportedAsPermissionDenied() throws {
        let root = TemporaryDirectory()
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
            root.remove()
        }
        try FileManager.default.createDirectory(atPath: root.path, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: root.path)
        let error = errorOf { try WriteAheadLog.open(directory: root.path) }
        #expect(error == .permissionDenied(path: root.file("LOCK")))
    }

    @Test func segmentNamesSortNumerically() {
        #expect(DataDirectory.segmentName(base: 42) == "journal-00000000000000000042.log")
        #expect(DataDirectory.sequence(in: "journal-00000000000000000042.log", prefix: "journal-", suffix: ".log") == 42)
        #expect(DataDirectory.sequence(in: "journal-42.log", prefix: "journal-", suffix: ".log") == nil)
        #expect(DataDirectory.sequence(in: "snapshot-00000000000000000042.snap.corrupt", prefix: "snapshot-", suffix: ".snap") == nil)
    }

    @Test func permissionErrorsNameThePath() throws {
        let root = TemporaryDirectory()
        defer { root.remove() }
        let faults = FaultScript()
        faults.inject([.fail(.permissionDenied)], into: .makeDirectory)
        let missing = errorOf { try openJournal(root, configuration(faults: faults)) }
        #expect(missing == .permissionDenied(path: root.path))
        #expect(missing?.description.contains("permission denied on \(root.path)") == true)

        faults.inject([.fail(.permissionDenied)], into: .open)
        #expect(errorOf { try openJournal(root, configuration(faults: faults)) } == .permissionDenied(path: root.file("LOCK")))
    }
}
