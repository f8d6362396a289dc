// `bangbang admin journal`: what is in a data directory. The file list (segments, snapshots,
// their sizes and sequence ranges) comes from names and sizes alone, so it is safe while the
// server runs. With the directory free, the journal is also opened as recovery opens it, which
// gives the last sequence and the records after the snapshot counted by kind.
import BangbangApplication
import BangbangProtocol
import BangbangServer
import Foundation
import Journal

enum JournalInspection {
    private static let segmentPrefix = "journal-", segmentSuffix = ".log"
    private static let snapshotPrefix = "snapshot-", snapshotSuffix = ".snap"

    /// `isLocked`: the server holds the directory; only the file list is read.
    static func inspect(_ configuration: ServerConfiguration, isLocked: Bool) throws -> JSONValue {
        let directory = configuration.dataDirectory
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        var lastSequence: UInt64?
        var snapshotSequence: UInt64?
        var counts: [String: Int] = [:]
        var warnings: [String] = []
        if !isLocked {
            let (journal, recovery) = try WriteAheadLog.open(directory: directory,
                                                       configuration: JournalConfiguration(syncPolicy: .never))
            defer { try? journal.close() }
            lastSequence = recovery.report.lastSequence
            snapshotSequence = recovery.report.snapshotSequence
            warnings = recovery.report.warnings
            for record in recovery.records { counts[JournalRecordNames.kind(of: record.payload), default: 0] += 1 }
        }
        let segmentBases = names.compactMap { sequence(in: $0, prefix: segmentPrefix, suffix: segmentSuffix) }.sorted()
        var files: [JSONValue] = []
        for name in names {
            let attributes = try? FileManager.default.attributesOfItem(atPath: (directory as NSString).appendingPathComponent(name))
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
            var entry: [String: JSONValue] = ["name": .string(name), "bytes": .integer(size)]
            if let base = sequence(in: name, prefix: segmentPrefix, suffix: segmentSuffix) {
                entry["kind"] = "segment"
                entry["first_sequence"] = .integer(Int64(base))
                if let next = segmentBases.first(where: { $0 > base }) {
                    entry["last_sequence"] = .integer(Int64(next - 1))
                } else if let lastSequence {
                    entry["last_sequence"] = lastSequence >= base ? .integer(Int64(lastSequence)) : .null
                }
            } else if let covered = sequence(in: name, prefix: snapshotPrefix, suffix: snapshotSuffix) {
                entry["kind"] = "snapshot"
                entry["last_sequence"] = .integer(Int64(covered))
            } else {
                entry["kind"] = name == "LOCK" ? "lock" : (name.hasSuffix("secret") ? "secret" : "other")
            }
            files.append(.object(entry))
        }
        var result: [String: JSONValue] = ["directory": .string(directory), "files": .array(files),
                                           "server_running": .bool(isLocked)]
        if let lastSequence { result["last_sequence"] = .integer(Int64(lastSequence)) }
        if let snapshotSequence { result["snapshot_sequence"] = .integer(Int64(snapshotSequence)) }
        if !isLocked {
            result["records_after_snapshot"] = .object(counts.mapValues { .integer(Int64($0)) })
            result["warnings"] = .array(warnings.map(JSONValue.string))
        }
        return .object(result)
    }

    private static func sequence(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
    }
}
