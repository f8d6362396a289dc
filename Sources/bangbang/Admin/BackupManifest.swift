// What a backup of the data directory holds (`bangbang admin backup`), written beside the copied
// files as `manifest.json`: each file's name, size and SHA-256, and the journal sequence of the
// backup's cut. `restore` verifies every file against it before copying anything, so a backup
// that was truncated, edited or only partly copied is refused rather than restored.
import BangbangApplication
import Crypto
import Foundation

struct BackupManifest: Codable, Equatable, Sendable {
    static let fileName = "manifest.json"
    static let formatVersion = 1

    struct File: Codable, Equatable, Sendable {
        var name: String
        var size: Int
        /// Lower-case hex.
        var sha256: String
    }

    var formatVersion = BackupManifest.formatVersion
    /// The last journal sequence the backup's snapshot and journal segments cover.
    var cutSequence: UInt64
    var files: [File]

    /// Why a backup cannot be restored; each message tells the operator what is wrong.
    enum Problem: Error, Equatable, CustomStringConvertible {
        case missingManifest(directory: String)
        case unreadableManifest(detail: String)
        case unsupportedVersion(Int)
        case missingFile(String)
        case sizeMismatch(String, expected: Int, found: Int)
        case checksumMismatch(String)
        case unsafeName(String)

        var description: String {
            switch self {
            case .missingManifest(let directory): "\(directory) holds no \(BackupManifest.fileName): not a backup"
            case .unreadableManifest(let detail): "\(BackupManifest.fileName) cannot be read: \(detail)"
            case .unsupportedVersion(let version): "\(BackupManifest.fileName) has format version \(version); this version reads \(BackupManifest.formatVersion)"
            case .missingFile(let name): "\(name) is listed in the manifest but missing from the backup"
            case .sizeMismatch(let name, let expected, let found): "\(name) has \(found) bytes, the manifest says \(expected)"
            case .checksumMismatch(let name): "\(name) does not match its SHA-256 in the manifest: the backup is damaged"
            case .unsafeName(let name): "\(name) is not a plain file name inside the backup"
            }
        }
    }

    /// Describes `names`, files already copied into `directory`.
    static func describe(_ names: [String], in directory: String, cutSequence: UInt64) throws -> BackupManifest {
        let files = try names.sorted().map { name in
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            return File(name: name, size: bytes.count, sha256: hex(Digest.sha256(bytes)))
        }
        return BackupManifest(cutSequence: cutSequence, files: files)
    }

    /// Reads `directory`'s manifest and checks every file it lists.
    static func verified(in directory: String) throws(Problem) -> BackupManifest {
        let path = directory + "/" + fileName
        guard let bytes = FileManager.default.contents(atPath: path) else { throw .missingManifest(directory: directory) }
        let manifest: BackupManifest
        do { manifest = try JSONDecoder().decode(BackupManifest.self, from: bytes) } catch {
            throw .unreadableManifest(detail: "\(error)")
        }
        guard manifest.formatVersion == formatVersion else { throw .unsupportedVersion(manifest.formatVersion) }
        for file in manifest.files {
            guard !file.name.isEmpty, !file.name.contains("/"), file.name != "..", file.name != ".",
                  file.name != fileName else { throw .unsafeName(file.name) }
            guard let contents = FileManager.default.contents(atPath: directory + "/" + file.name) else {
                throw .missingFile(file.name)
            }
            guard contents.count == file.size else { throw .sizeMismatch(file.name, expected: file.size, found: contents.count) }
            guard hex(Digest.sha256(contents)) == file.sha256 else { throw .checksumMismatch(file.name) }
        }
        return manifest
    }

    func write(to directory: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: URL(fileURLWithPath: directory + "/" + Self.fileName), options: .atomic)
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
