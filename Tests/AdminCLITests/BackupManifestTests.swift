import Foundation
import Testing
@testable import bangbang

@Suite struct BackupManifestTests {
    private func backup(_ files: [String: String]) throws -> String {
        let directory = NSTemporaryDirectory() + "backup-manifest-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, text) in files { try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name)) }
        try BackupManifest.describe(Array(files.keys), in: directory, cutSequence: 42).write(to: directory)
        return directory
    }

    private func problem(in directory: String) -> BackupManifest.Problem? {
        do { _ = try BackupManifest.verified(in: directory); return nil } catch { return error }
    }

    @Test func anIntactBackupVerifiesWithItsCutAndFiles() throws {
        let directory = try backup(["snapshot-1.snap": "snap", "journal-2.log": "records"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let manifest = try BackupManifest.verified(in: directory)
        #expect(manifest.cutSequence == 42)
        #expect(manifest.files.map(\.name) == ["journal-2.log", "snapshot-1.snap"])
        #expect(manifest.files[0].sha256.count == 64)
    }

    @Test func aChangedFileIsRefusedNamingIt() throws {
        let directory = try backup(["journal-2.log": "records"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("recordz".utf8).write(to: URL(fileURLWithPath: directory + "/journal-2.log"))
        #expect(problem(in: directory) == .checksumMismatch("journal-2.log"))
    }

    @Test func aTruncatedOrMissingFileIsRefused() throws {
        let directory = try backup(["journal-2.log": "records", "snapshot-1.snap": "snap"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("rec".utf8).write(to: URL(fileURLWithPath: directory + "/journal-2.log"))
        #expect(problem(in: directory) == .sizeMismatch("journal-2.log", expected: 7, found: 3))
        try FileManager.default.removeItem(atPath: directory + "/journal-2.log")
        #expect(problem(in: directory) == .missingFile("journal-2.log"))
    }

    @Test func aDirectoryWithoutAManifestOrWithAForeignOneIsRefused() throws {
        let directory = try backup([:])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("{\"formatVersion\": 9, \"cutSequence\": 1, \"files\": []}".utf8)
            .write(to: URL(fileURLWithPath: directory + "/" + BackupManifest.fileName))
        #expect(problem(in: directory) == .unsupportedVersion(9))
        try Data("not json".utf8).write(to: URL(fileURLWithPath: directory + "/" + BackupManifest.fileName))
        guard case .unreadableManifest = problem(in: directory) else { Issue.record("a garbled manifest was read"); return }
        try FileManager.default.removeItem(atPath: directory + "/" + BackupManifest.fileName)
        #expect(problem(in: directory) == .missingManifest(directory: directory))
    }

    @Test func aNameReachingOutsideTheBackupIsRefused() throws {
        let directory = try backup([:])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let manifest = BackupManifest(cutSequence: 1, files: [.init(name: "../etc/passwd", size: 1, sha256: "00")])
        try manifest.write(to: directory)
        #expect(problem(in: directory) == .unsafeName("../etc/passwd"))
    }
}
