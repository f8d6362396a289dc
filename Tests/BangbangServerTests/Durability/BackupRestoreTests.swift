// `bangbang admin backup` taken while orders are being published, restored into a new data
// directory: every order acknowledged before the backup began is there, in memory or in the
// archive. And the refusals: a non-empty target, a running server, a damaged or unfinished backup.
// The backup code is the command line's (the executable's Admin/); the harness is the server's.
import BangbangCore
import Foundation
import Synchronization
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import bangbang

final class StopFlag: Sendable {
    let isSet = Atomic(false)
}

@Suite struct BackupRestoreTests {
    static let day: Int64 = 86_400_000

    @Test func aBackupTakenDuringPublishingRestoresEveryAcknowledgedOrder() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000201")
        let runner = try await harness.logIn("+8613900000202")
        // One order closed, archived and moved out of memory, so only the archive holds it.
        let closed = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: closed, by: runner)
        try await harness.run(.pickUp, on: closed, by: runner)
        try await harness.run(.deliver(code: nil), on: closed, by: runner)
        try await harness.run(.confirm, on: closed, by: publisher)
        let revision = try #require(await harness.order(closed)?.revision)
        try await harness.eventually("the closed order is archived") { await harness.archivedRevision(closed) == revision }
        harness.clock.advance(milliseconds: 8 * Self.day)
        #expect(try await harness.sweepArchive() == 1)
        #expect(await harness.order(closed) == nil)

        var acknowledged = [closed]
        for _ in 0..<20 { acknowledged.append(try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)) }
        harness.snapshot()
        for _ in 0..<20 { acknowledged.append(try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)) }

        let stop = StopFlag()
        let background = Task {
            var published = 0
            while !stop.isSet.load(ordering: .relaxed) {
                _ = try await harness.publish(Drafts.purchase(now: harness.clock.now), by: runner)
                published += 1
            }
            return published
        }
        let target = harness.directory + "/backup"
        let source = harness.configuration.dataDirectory
        let summary = try await Task.detached { try DataBackup.backup(dataDirectory: source, into: target) }.value
        stop.isSet.store(true, ordering: .relaxed)
        _ = try await background.value
        let names = summary.manifest.files.map(\.name)
        #expect(names.contains("archive.sqlite") && names.contains(SecretFile.name))
        #expect(names.contains { $0.hasPrefix("snapshot-") } && names.contains { $0.hasPrefix("journal-") })
        #expect(!names.contains(AdminSecret.fileName) && !names.contains("LOCK"))
        #expect(summary.manifest.cutSequence > 0)

        let restored = try ApplicationHarness()
        try restored.restart {
            _ = try DataBackup.restore(from: target, into: restored.configuration.dataDirectory, force: true)
        }
        for id in acknowledged {
            let inMemory = await restored.order(id) != nil
            let archived = try restored.app.archive.order(id: String(id.rawValue)) != nil
            #expect(inMemory || archived, "order \(id) is missing after the restore")
        }
        #expect(try restored.app.archive.order(id: String(closed.rawValue))?.status == "completed")
        #expect(await restored.order(acknowledged[1])?.publisher == publisher)
    }

    @Test func backupRefusesANonEmptyTarget() throws {
        let harness = try ApplicationHarness()
        let target = harness.directory + "/backup"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: target + "/keep", contents: Data("x".utf8)))
        let failure = #expect(throws: DataBackup.Failure.self) {
            try DataBackup.backup(dataDirectory: harness.configuration.dataDirectory, into: target)
        }
        #expect(failure?.description.contains("not empty") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: target) == ["keep"])
    }

    @Test func restoreRefusesARunningServerANonEmptyDirectoryAndADamagedBackup() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000301")
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        let target = harness.directory + "/backup"
        _ = try DataBackup.backup(dataDirectory: harness.configuration.dataDirectory, into: target)

        let running = #expect(throws: DataBackup.Failure.self) {
            try DataBackup.restore(from: target, into: harness.configuration.dataDirectory, force: true)
        }
        #expect(running?.description.contains("running") == true)

        let occupied = harness.directory + "/occupied"
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: occupied + "/session-secret", contents: Data("old".utf8)))
        let nonEmpty = #expect(throws: DataBackup.Failure.self) {
            try DataBackup.restore(from: target, into: occupied, force: false)
        }
        #expect(nonEmpty?.description.contains("--force") == true)
        #expect(FileManager.default.contents(atPath: occupied + "/session-secret") == Data("old".utf8))

        // One flipped byte in a segment: refused, and nothing is written.
        let manifest = try BackupManifest.verified(in: target)
        let segment = try #require(manifest.files.first { $0.name.hasPrefix("journal-") })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: target + "/" + segment.name))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: target + "/" + segment.name))
        let fresh = harness.directory + "/fresh"
        let damaged = #expect(throws: DataBackup.Failure.self) { try DataBackup.restore(from: target, into: fresh, force: false) }
        #expect(damaged?.description.contains("SHA-256") == true)
        #expect(!FileManager.default.fileExists(atPath: fresh))

        // A backup cut short before its manifest.
        try FileManager.default.removeItem(atPath: target + "/" + BackupManifest.fileName)
        let unfinished = #expect(throws: DataBackup.Failure.self) { try DataBackup.restore(from: target, into: fresh, force: false) }
        #expect(unfinished?.description.contains("not a backup") == true)
    }

    @Test func aRestoreThatFailsPartWayLeavesNoneOfTheBackupsFilesBehind() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000302")
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        let backup = harness.directory + "/backup"
        _ = try DataBackup.backup(dataDirectory: harness.configuration.dataDirectory, into: backup)
        let manifest = try BackupManifest.verified(in: backup)
        #expect(manifest.files.count >= 3)

        // The last file cannot be written (a directory stands where its temporary copy goes), so
        // the files before it were already in place when the restore fails.
        let target = harness.directory + "/target"
        let last = try #require(manifest.files.last)
        try FileManager.default.createDirectory(atPath: target + "/" + last.name + ".restoring", withIntermediateDirectories: true)
        let failure = #expect(throws: DataBackup.Failure.self) {
            try DataBackup.restore(from: backup, into: target, force: true)
        }
        #expect(failure?.description.contains("nothing was restored") == true)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: target))
        for file in manifest.files { #expect(!left.contains(file.name), "\(file.name) was left half-restored") }
    }
}
