import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Platform

/// What `writeSnapshot` did, for logs and metrics.
public struct SnapshotReport: Sendable {
    /// The file written.
    public var file: String
    /// The last sequence the snapshot includes.
    public var coveredSequence: UInt64
    /// Size of the caller's contents.
    public var contentBytes: Int
    /// Size of the file on disk (header included, after compression).
    public var fileBytes: Int
    public var isCompressed: Bool
    /// Wall time from start to the directory fsync after the segment deletions.
    public var duration: Duration
    /// Journal segments and older snapshots removed because they are no longer needed.
    public var deletedSegments: [String]
    public var deletedSnapshots: [String]
}

extension WriteAheadLog {
    /// Stores `contents` as the state after every record up to and including `sequence`, then
    /// deletes what is no longer needed for recovery (the two newest snapshots are kept, and the
    /// segments after the older one, or after `keepingRecordsAfter` when that is older). Blocks the calling thread for the file I/O; call it from a
    /// background context, not the journal's queue. The caller builds `contents` from a consistent
    /// cut: everything through `sequence`, nothing after. Snapshots are serialized with each other.
    /// On failure nothing changes on disk except a removed temp file, and the error is returned.
    /// `keepingRecordsAfter`: a sequence through which another store (the order archive) also
    /// covers the journal; no segment holding a record after it is deleted, whatever the
    /// snapshots cover.
    @discardableResult
    public func writeSnapshot(contents: [UInt8], coveringThrough sequence: UInt64,
                              keepingRecordsAfter bound: UInt64 = .max) throws(JournalError) -> SnapshotReport {
        dispatchPrecondition(condition: .notOnQueue(queue))
        precondition(sequence < nextSequence, "snapshot covers sequence \(sequence), which has not been assigned yet")
        let clock = ContinuousClock()
        let started = clock.now
        let result: Result<SnapshotReport, JournalError> = snapshotCatalog.withLock { catalog in
            if let newest = catalog.last {
                precondition(sequence >= newest, "snapshot covers sequence \(sequence), older than the existing snapshot through \(newest)")
            }
            let name = DataDirectory.snapshotName(covered: sequence)
            let path = dataDirectory.file(name)
            let temporary = path + DataDirectory.temporarySuffix
            let bytes = SnapshotFormat.encode(contents: contents, coveredSequence: sequence, compress: configuration.compressesSnapshots)
            // The file a failure is about, for the operator: the temp file, then the snapshot's
            // name once it is renamed, then the directory.
            var subject = temporary
            do throws(Errno) {
                let descriptor = try syscalls.openFile(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
                do throws(Errno) {
                    try syscalls.writeAll(descriptor, bytes, at: 0)
                    try syscalls.fullSync(descriptor)
                } catch {
                    syscalls.close(descriptor)
                    throw error
                }
                syscalls.close(descriptor)
                subject = path
                try syscalls.rename(temporary, to: path)
                subject = directory
                try syscalls.syncDirectory(directory)
            } catch {
                try? syscalls.removeFile(temporary)
                return .failure(JournalError(error, path: subject))
            }
            if catalog.last != sequence { catalog.append(sequence) }
            writer.withLock { $0.rollsBeforeNextBatch = true }

            // Keep the two newest snapshots, and the segments needed to replay after the older one.
            var deletedSnapshots: [String] = []
            while catalog.count > 2 {
                let old = DataDirectory.snapshotName(covered: catalog.removeFirst())
                if (try? syscalls.removeFile(dataDirectory.file(old))) != nil { deletedSnapshots.append(old) }
            }
            var deletedSegments: [String] = []
            if catalog.count == 2 {
                deletedSegments = deleteSegments(coveredThrough: min(catalog[0], bound))
            }
            if !deletedSnapshots.isEmpty || !deletedSegments.isEmpty {
                // Removals need not be durable for correctness (recovery skips covered records),
                // so a failure here is not reported as a failed snapshot.
                try? syscalls.syncDirectory(directory)
            }
            return .success(SnapshotReport(file: name, coveredSequence: sequence, contentBytes: contents.count,
                                           fileBytes: bytes.count, isCompressed: SnapshotFormat.isCompressed(bytes),
                                           duration: clock.now - started,
                                           deletedSegments: deletedSegments, deletedSnapshots: deletedSnapshots))
        }
        return try result.get()
    }

    /// Deletes the segments whose every possible sequence is at most `covered`: a segment ends
    /// where the next begins, and the active (last) segment is never deleted.
    private func deleteSegments(coveredThrough covered: UInt64) -> [String] {
        writer.withLock { state in
            var deleted: [String] = []
            while state.segments.count > 1, state.segments[1].base - 1 <= covered {
                let segment = state.segments[0]
                guard (try? syscalls.removeFile(dataDirectory.file(segment.name))) != nil else { break }
                state.segments.removeFirst()
                deleted.append(segment.name)
            }
            return deleted
        }
    }
}
