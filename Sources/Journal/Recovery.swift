#if canImport(Glibc)
import Glibc
#endif
import Platform

/// One record handed back by recovery.
public struct JournalRecord: Sendable, Equatable {
    public var sequence: UInt64
    public var payload: [UInt8]

    public init(sequence: UInt64, payload: [UInt8]) {
        self.sequence = sequence
        self.payload = payload
    }
}

/// What `WriteAheadLog.open` found and did, for the server to log at startup.
public struct RecoveryReport: Sendable {
    /// The snapshot file loaded, if any.
    public var snapshotFile: String?
    /// The last sequence the loaded snapshot covers (0 without a snapshot).
    public var snapshotSequence: UInt64
    /// Records returned after the snapshot.
    public var recordsReplayed: Int
    /// Bytes cut from the tail of the last segment (a torn or corrupt final write).
    public var bytesTruncated: Int
    /// The last sequence in the recovered history (snapshot or record); new appends get larger ones.
    public var lastSequence: UInt64
    /// Everything unusual, each line saying what happened and what was kept.
    public var warnings: [String]
}

/// The state to rebuild: the snapshot's bytes (if any), then the records after it, in order.
public struct Recovery: Sendable {
    public var snapshot: [UInt8]?
    public var records: [JournalRecord]
    public var report: RecoveryReport
}

/// A segment known to the journal: its base sequence and file name.
struct SegmentFile: Equatable {
    var base: UInt64
    var name: String
}

/// Recovery proper. The rules, in the order they are applied:
///  1. Leftover `*.tmp` files are half-written snapshots: removed.
///  2. Snapshots are tried newest first. A damaged one is renamed to `*.corrupt` (never deleted:
///     the operator may want it) and the next older one is tried; with none left, the journal
///     alone is used if it still starts at sequence 1.
///  3. The first segment's base must not be beyond the snapshot's covered sequence + 1, or records
///     are missing: refused.
///  4. Segments are read in order. Zeros from a record boundary to the end of a segment are its
///     preallocated space, not damage. Damage in the last segment with no intact record after it
///     is a torn tail: reported and truncated away. Any other damage is refused (`corruptJournal`).
///     A segment of another format version is refused (`unsupportedFormatVersion`).
struct RecoveryProcedure {
    let directory: DataDirectory
    let configuration: JournalConfiguration
    var syscalls: Syscalls { directory.syscalls }

    struct Outcome {
        var recovery: Recovery
        var segments: [SegmentFile]
        /// Length of the last segment after any truncation (nil when there is no segment yet).
        var activeLength: Int?
        var nextSequence: UInt64
        /// Covered sequences of the snapshot files left in place, ascending.
        var snapshots: [UInt64]
    }

    func run() throws(JournalError) -> Outcome {
        var warnings: [String] = []
        let names: [String]
        do { names = try syscalls.directoryEntries(directory.path) } catch { throw JournalError(error, path: directory.path) }

        var segments: [SegmentFile] = []
        var snapshotSequences: [UInt64] = []
        for name in names {
            if name.hasSuffix(DataDirectory.temporarySuffix) {
                try? syscalls.removeFile(directory.file(name))
                warnings.append("removed \(name), an unfinished snapshot from an earlier run")
            } else if let base = DataDirectory.sequence(in: name, prefix: DataDirectory.segmentPrefix, suffix: DataDirectory.segmentSuffix) {
                segments.append(SegmentFile(base: base, name: name))
            } else if let covered = DataDirectory.sequence(in: name, prefix: DataDirectory.snapshotPrefix, suffix: DataDirectory.snapshotSuffix) {
                snapshotSequences.append(covered)
            }
        }
        segments.sort { $0.base < $1.base }
        snapshotSequences.sort()
        // Sequences are never reused, even those of snapshots that turn out to be damaged.
        var nextSequence = max(1, (snapshotSequences.last ?? 0) &+ 1)

        let hadSnapshots = !snapshotSequences.isEmpty
        // Rule 2: the newest usable snapshot.
        var chosen: (covered: UInt64, contents: [UInt8], name: String)?
        for covered in snapshotSequences.reversed() {
            let name = DataDirectory.snapshotName(covered: covered)
            let bytes: [UInt8]
            do { bytes = try syscalls.readFile(directory.file(name)) } catch { throw JournalError(error, path: directory.file(name)) }
            switch SnapshotFormat.decode(bytes, maximumSize: configuration.maximumSnapshotSize) {
            case .success(let decoded) where decoded.coveredSequence == covered:
                chosen = (covered, decoded.contents, name)
            case .success(let decoded):
                try setAside(name, because: "it says it covers sequence \(decoded.coveredSequence) but is named for \(covered)",
                             warnings: &warnings, snapshots: &snapshotSequences)
            case .failure(.unsupportedVersion(let version)):
                throw JournalError.unsupportedFormatVersion(file: directory.file(name), found: UInt32(version),
                                                            supported: UInt32(SnapshotFormat.currentVersion))
            case .failure(let defect):
                try setAside(name, because: defect.description, warnings: &warnings, snapshots: &snapshotSequences)
            }
            if chosen != nil { break }
        }
        let covered = chosen?.covered ?? 0

        // Rule 3.
        if let first = segments.first, first.base > covered + 1 {
            throw JournalError.incompleteHistory(detail: chosen == nil
                ? "no usable snapshot and the oldest segment \(first.name) starts at sequence \(first.base), not 1"
                : "snapshot \(chosen!.name) covers through \(covered) but the oldest segment \(first.name) starts at \(first.base)")
        }
        if segments.isEmpty && chosen == nil && hadSnapshots {
            throw JournalError.incompleteHistory(detail: "every snapshot is unusable (see the .corrupt files) and there is no journal segment to rebuild from")
        }

        // Rule 4.
        var records: [JournalRecord] = []
        var previous: UInt64 = 0
        var bytesTruncated = 0
        var activeLength: Int?
        var index = 0
        while index < segments.count {
            let segment = segments[index]
            let isLast = index == segments.count - 1
            let path = directory.file(segment.name)
            let bytes: [UInt8]
            do { bytes = try syscalls.readFile(path) } catch { throw JournalError(error, path: path) }
            let header: SegmentHeader
            switch SegmentHeader.decode(bytes) {
            case .success(let decoded):
                header = decoded
            case .failure(.tooShort) where isLast:
                // A crash while creating the segment: it holds no record.
                do { try syscalls.removeFile(path) } catch { throw JournalError(error, path: path) }
                try syncDirectory()
                warnings.append("\(segment.name) had an incomplete header (\(bytes.count) bytes, a crash while it was being created); removed it, nothing was lost")
                bytesTruncated += bytes.count
                nextSequence = max(nextSequence, segment.base)
                segments.removeLast()
                continue
            case .failure(.tooShort):
                throw JournalError.corruptJournal(file: path, offset: 0, detail: "incomplete segment header in a segment that is not the last")
            case .failure(.badMagic):
                throw JournalError.notAJournalFile(file: path)
            case .failure(.unsupportedVersion(let version)):
                throw JournalError.unsupportedFormatVersion(file: path, found: version, supported: SegmentHeader.currentVersion)
            }
            guard header.baseSequence == segment.base else {
                throw JournalError.corruptJournal(file: path, offset: 8, detail: "header base sequence \(header.baseSequence) does not match the file name")
            }
            previous = max(previous, segment.base - 1)
            let scan = SegmentScan(bytes: bytes, previousSequence: previous, maximumRecordSize: configuration.maximumRecordSize)
            for record in scan.records where record.sequence > covered {
                records.append(JournalRecord(sequence: record.sequence, payload: Array(bytes[record.payload])))
            }
            previous = scan.lastSequence ?? previous
            if let damage = scan.damage {
                guard isLast && !damage.isFollowedByValidRecords else {
                    throw JournalError.corruptJournal(file: path, offset: damage.offset,
                                                      detail: damage.summary + (isLast ? ", followed by intact records" : ", in a segment that is not the last"))
                }
                let cut = bytes.count - scan.validLength
                try truncate(path, to: scan.validLength)
                bytesTruncated += cut
                let kept = scan.lastSequence.map { "kept every record through sequence \($0)" } ?? "the segment holds no intact record"
                warnings.append("\(segment.name): \(damage.summary) at offset \(damage.offset), the tail of an interrupted write; truncated \(cut) bytes, \(kept)")
            }
            if isLast { activeLength = scan.validLength }
            nextSequence = max(nextSequence, previous &+ 1, segment.base)
            index += 1
        }

        let lastSequence = max(covered, previous)
        let report = RecoveryReport(snapshotFile: chosen?.name, snapshotSequence: covered, recordsReplayed: records.count,
                                    bytesTruncated: bytesTruncated, lastSequence: lastSequence, warnings: warnings)
        return Outcome(recovery: Recovery(snapshot: chosen?.contents, records: records, report: report),
                       segments: segments, activeLength: activeLength, nextSequence: nextSequence,
                       snapshots: snapshotSequences)
    }

    private func setAside(_ name: String, because reason: String, warnings: inout [String],
                          snapshots: inout [UInt64]) throws(JournalError) {
        let corrupt = directory.file(name + ".corrupt")
        do { try syscalls.rename(directory.file(name), to: corrupt) } catch { throw JournalError(error, path: corrupt) }
        try syncDirectory()
        snapshots.removeAll { DataDirectory.snapshotName(covered: $0) == name }
        warnings.append("snapshot \(name) is unusable (\(reason)); renamed it to \(name).corrupt and fell back to the previous snapshot and the journal")
    }

    private func truncate(_ path: String, to length: Int) throws(JournalError) {
        do {
            let descriptor = try syscalls.openFile(path, flags: O_WRONLY)
            defer { syscalls.close(descriptor) }
            try syscalls.truncate(descriptor, toLength: length)
            try syscalls.dataSync(descriptor)
        } catch {
            throw JournalError(error, path: path)
        }
    }

    private func syncDirectory() throws(JournalError) {
        do { try syscalls.syncDirectory(directory.path) } catch { throw JournalError(error, path: directory.path) }
    }
}
