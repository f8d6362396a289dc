// `bangbang admin backup` and `restore`: a crash-consistent copy of a data directory, taken
// while the server runs, with no help from the server.
//
// The copy is what a crash at one moment would have left, in an order that keeps it whole:
//   1. the newest snapshot;
//   2. every journal segment from the one holding the record after the snapshot on, each read
//      up to its current size (a record torn at the end of the last one is dropped by recovery,
//      as after a crash); a file deleted meanwhile (a newer snapshot made it obsolete) starts the
//      copy over;
//   3. the archive, through SQLite's online backup, after the journal: the server moves an order
//      out of memory only once the archive holds it, so an archive copied later holds every
//      order the copied journal no longer has;
//   4. the session secret, so issued tokens stay valid;
//   5. manifest.json last: a backup cut short has none and is refused by restore.
// Restore verifies every file against the manifest before it writes anything, and fsyncs each
// file and the directory before it reports success.
import BangbangApplication
import BangbangServer
import Foundation
import OrderArchive
import Platform

enum DataBackup {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// What `backup` copied.
    struct Summary: Sendable {
        var manifest: BackupManifest
        var attempts: Int
    }

    static let maximumAttempts = 5
    private static let system = Syscalls.live
    private static let segmentPrefix = "journal-", segmentSuffix = ".log"
    private static let snapshotPrefix = "snapshot-", snapshotSuffix = ".snap"
    private static let copiedFiles = [DataDirectoryFiles.sessionSecret]
    /// Files of a data directory that a restore with `--force` replaces.
    private static func isDataFile(_ name: String) -> Bool {
        name.hasPrefix(segmentPrefix) || name.hasPrefix(snapshotPrefix) || name.hasPrefix(DataDirectoryFiles.archive)
            || name == DataDirectoryFiles.sessionSecret || name == AdminSecret.fileName
    }

    // MARK: Backup

    static func backup(dataDirectory: String, into target: String) throws(Failure) -> Summary {
        if let names = try? FileManager.default.contentsOfDirectory(atPath: target), !names.isEmpty {
            throw Failure("\(target) is not empty: give a new or empty directory")
        }
        do { try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true) } catch {
            throw Failure("cannot create \(target): \(error.localizedDescription)")
        }
        for attempt in 1...maximumAttempts {
            do {
                let (journalFiles, cut) = try copyJournal(from: dataDirectory, to: target)
                var names = journalFiles
                let archive = dataDirectory + "/" + DataDirectoryFiles.archive
                if FileManager.default.fileExists(atPath: archive) {
                    do {
                        try OrderArchive.backup(archiveAt: archive, to: target + "/" + DataDirectoryFiles.archive)
                    } catch {
                        throw Failure("cannot copy \(archive): \(error)")
                    }
                    names.append(DataDirectoryFiles.archive)
                }
                for name in copiedFiles where FileManager.default.fileExists(atPath: dataDirectory + "/" + name) {
                    try copy(dataDirectory + "/" + name, to: target + "/" + name)
                    names.append(name)
                }
                let manifest: BackupManifest
                do {
                    manifest = try BackupManifest.describe(names, in: target, cutSequence: cut)
                    for name in names { try sync(target + "/" + name) }
                    try manifest.write(to: target)
                    try sync(target + "/" + BackupManifest.fileName)
                    try sync(target)
                } catch let failure as Failure {
                    throw failure
                } catch {
                    throw Failure("cannot write the manifest in \(target): \(error.localizedDescription)")
                }
                return Summary(manifest: manifest, attempts: attempt)
            } catch let vanished as Vanished {
                clear(target)
                if attempt == maximumAttempts {
                    throw Failure("\(vanished.name) kept disappearing while it was copied (\(maximumAttempts) attempts): "
                                  + "the server is writing snapshots faster than they can be copied; try again")
                }
            } catch let failure as Failure {
                clear(target)
                throw failure
            } catch {
                clear(target)
                throw Failure("\(error)")
            }
        }
        throw Failure("internal inconsistency in DataBackup: no attempt finished")
    }

    private struct Vanished: Error { var name: String }

    /// Copies the newest snapshot and the segments after it; returns their names and the cut
    /// (the snapshot's sequence: recovery of the copy replays the copied records after it).
    private static func copyJournal(from source: String, to target: String) throws -> ([String], UInt64) {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: source) } catch {
            throw Failure("cannot list \(source): \(error.localizedDescription)")
        }
        let snapshots = names.compactMap { sequence(in: $0, prefix: snapshotPrefix, suffix: snapshotSuffix) }.sorted()
        let segments = names.compactMap { name in
            sequence(in: name, prefix: segmentPrefix, suffix: segmentSuffix).map { (base: $0, name: name) }
        }.sorted { $0.base < $1.base }
        let covered = snapshots.last ?? 0
        var copied: [String] = []
        if snapshots.last != nil, let name = names.first(where: {
            sequence(in: $0, prefix: snapshotPrefix, suffix: snapshotSuffix) == covered
        }) {
            try copy(source + "/" + name, to: target + "/" + name)
            copied.append(name)
        }
        let first = segments.lastIndex { $0.base <= covered + 1 } ?? segments.startIndex
        for segment in segments[first...] {
            try copy(source + "/" + segment.name, to: target + "/" + segment.name)
            copied.append(segment.name)
        }
        return (copied, covered)
    }

    /// Copies `source` as it is now; throws `Vanished` when it no longer exists.
    private static func copy(_ source: String, to destination: String) throws {
        let bytes: Data
        do { bytes = try Data(contentsOf: URL(fileURLWithPath: source)) } catch {
            if !FileManager.default.fileExists(atPath: source) { throw Vanished(name: (source as NSString).lastPathComponent) }
            throw Failure("cannot read \(source): \(error.localizedDescription)")
        }
        guard FileManager.default.createFile(atPath: destination, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw Failure("cannot write \(destination): check the directory's permissions and free space")
        }
    }

    // MARK: Restore

    static func restore(from backup: String, into dataDirectory: String, force: Bool) throws(Failure) -> BackupManifest {
        let manifest: BackupManifest
        do { manifest = try BackupManifest.verified(in: backup) } catch {
            throw Failure("refusing to restore \(backup): \(error)")
        }
        if AdminCLI.isDirectoryLocked(dataDirectory) {
            throw Failure("a server is running on \(dataDirectory) (it holds the lock): stop it first")
        }
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        if !existing.isEmpty {
            guard force else {
                throw Failure("\(dataDirectory) is not empty: restore into a new directory, or give --force to replace "
                              + "its journal, snapshots, archive and secrets")
            }
            for name in existing where isDataFile(name) {
                do { try system.removeFile(dataDirectory + "/" + name) } catch {
                    throw Failure("cannot remove \(dataDirectory)/\(name): \(error.reason)")
                }
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            for file in manifest.files {
                let temporary = dataDirectory + "/" + file.name + ".restoring"
                try copy(backup + "/" + file.name, to: temporary)
                try sync(temporary)
                do { try system.rename(temporary, to: dataDirectory + "/" + file.name) } catch {
                    throw Failure("cannot rename \(temporary): \(error.reason)")
                }
            }
            try sync(dataDirectory)
        } catch {
            // A half-restored directory would start as a server that silently misses what the
            // files not yet copied held: leave none of the backup's files behind.
            for file in manifest.files {
                try? system.removeFile(dataDirectory + "/" + file.name + ".restoring")
                try? system.removeFile(dataDirectory + "/" + file.name)
            }
            let reason = (error as? Failure)?.description ?? "cannot restore into \(dataDirectory): \(error)"
            throw Failure(reason + "; nothing was restored (\(dataDirectory) holds none of the backup's files)")
        }
        return manifest
    }

    // MARK: Files

    private static func sync(_ path: String) throws(Failure) {
        let descriptor: Int32
        do { descriptor = try system.openFile(path, flags: O_RDONLY) } catch {
            throw Failure("cannot open \(path): \(error.reason)")
        }
        defer { system.close(descriptor) }
        do { try system.fullSync(descriptor) } catch { throw Failure("cannot fsync \(path): \(error.reason)") }
    }

    private static func clear(_ directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            try? system.removeFile(directory + "/" + name)
        }
    }

    private static func sequence(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
