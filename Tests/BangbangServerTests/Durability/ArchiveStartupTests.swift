// The order archive at start-up: created next to the journal on a new data directory, and a
// file that is not ours refuses the start with a message naming it, left as it was.
import Foundation
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct ArchiveStartupTests {
    @Test func aNewDataDirectoryGetsAnEmptyArchive() throws {
        let harness = try ApplicationHarness()
        let path = harness.configuration.dataDirectory + "/" + Application.archiveFileName
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try harness.app.archive.watermark() == 0)
        #expect(harness.app.archive.path == path)
    }

    @Test func aFileThatIsNotAnArchiveRefusesTheStartAndIsLeftAlone() throws {
        let harness = try ApplicationHarness()
        let path = harness.configuration.dataDirectory + "/" + Application.archiveFileName
        try harness.app.journal.close()
        try FileManager.default.removeItem(atPath: path)
        let garbage = Array(repeating: UInt8(ascii: "x"), count: 4096)
        _ = FileManager.default.createFile(atPath: path, contents: Data(garbage))
        let refused = #expect(throws: ConfigurationError.self) { try harness.open() }
        #expect(refused?.message.contains(path) == true)
        #expect(refused?.message.contains("not an SQLite database") == true)
        #expect(FileManager.default.contents(atPath: path) == Data(garbage))
        // The journal's lock was given back: a good archive file lets the same directory start.
        try FileManager.default.removeItem(atPath: path)
        let reopened = try harness.open()
        #expect(try reopened.archive.watermark() == 0)
        try reopened.journal.close()
    }

    /// The built server exits non-zero and says why on standard error.
    @Test func theServerBinaryRefusesAForeignArchiveWithANonZeroExit() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let binary = ProcessInfo.processInfo.environment["BANGBANG_BINARY"] ?? root.path + "/.build/debug/bangbang"
        try #require(FileManager.default.isExecutableFile(atPath: binary), "run `swift build` first")
        let directory = try makeTemporaryDirectory("bangbang-archive-refused")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let data = directory + "/data"
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        let garbage = Data("this is not a database, but it is somebody's file\n".utf8)
        _ = FileManager.default.createFile(atPath: data + "/" + Application.archiveFileName, contents: garbage)

        let errors = directory + "/errors.log"
        let process = try ChildProcess(executable: binary,
                                       arguments: ["--port", "0", "--host", "127.0.0.1", "--data-dir", data, "--fsync", "never", "--no-web"],
                                       logPath: "/dev/null", errorLogPath: errors)
        let status = process.waitUntilExit()
        let output = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(status != 0)
        #expect(output.contains("cannot start") && output.contains(Application.archiveFileName)
                && output.contains("not an SQLite database"), "\(output)")
        #expect(FileManager.default.contents(atPath: data + "/" + Application.archiveFileName) == garbage)
    }
}
