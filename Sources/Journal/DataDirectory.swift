#if canImport(Glibc)
import Glibc
#endif
import Platform

/// File names inside the data directory, and the directory's creation and locking.
///
///     LOCK                                   flock'ed while a journal is open
///     journal-<base sequence, 20 digits>.log segments; zero-padded so names sort like numbers
///     snapshot-<covered sequence>.snap       snapshots
///     *.tmp                                  a snapshot being written; removed at open
///     *.corrupt                              a snapshot found damaged at open, kept for the operator
struct DataDirectory {
    let path: String
    let syscalls: Syscalls

    static let segmentPrefix = "journal-"
    static let segmentSuffix = ".log"
    static let snapshotPrefix = "snapshot-"
    static let snapshotSuffix = ".snap"
    static let temporarySuffix = ".tmp"

    static func paddedSequence(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    static func segmentName(base: UInt64) -> String { segmentPrefix + paddedSequence(base) + segmentSuffix }
    static func snapshotName(covered: UInt64) -> String { snapshotPrefix + paddedSequence(covered) + snapshotSuffix }

    /// The sequence in a segment or snapshot name, or nil for any other file.
    static func sequence(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix),
              name.count == prefix.count + 20 + suffix.count else { return nil }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Creates the directory (and missing parents) and checks that it is one.
    func prepare() throws(JournalError) {
        switch try kind(of: path) {
        case .directory:
            return
        case .other:
            throw JournalError.notADirectory(path: path)
        case .missing:
            break
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try DataDirectory(path: String(path[..<slash]), syscalls: syscalls).prepare()
        }
        do {
            try syscalls.makeDirectory(path)
        } catch {
            // EEXIST: created concurrently by someone else; the kind check below still applies.
            if error != .fileExists { throw JournalError(error, path: path) }
        }
        if try kind(of: path) != .directory { throw JournalError.notADirectory(path: path) }
    }

    private func kind(of path: String) throws(JournalError) -> Syscalls.FileKind {
        do {
            return try syscalls.fileKind(path)
        } catch {
            throw JournalError(error, path: path)
        }
    }

    /// Opens and locks `LOCK`, returning the descriptor to keep open for the journal's lifetime.
    /// flock is per open file description, so a second open in the same process is refused too.
    func lock() throws(JournalError) -> Int32 {
        let lockPath = file("LOCK")
        let descriptor: Int32
        do {
            descriptor = try syscalls.openFile(lockPath, flags: O_RDWR | O_CREAT)
        } catch {
            throw JournalError(error, path: lockPath)
        }
        do {
            try syscalls.lockExclusively(descriptor)
        } catch {
            syscalls.close(descriptor)
            if error == .wouldBlock { throw JournalError.directoryLocked(path: path) }
            throw JournalError(error, path: lockPath)
        }
        return descriptor
    }
}

extension DataDirectory {
    /// Creates a segment holding only its header, durable (file and directory entry) before any
    /// record goes in, and returns a descriptor for writing. On failure nothing is left behind.
    func createSegment(base: UInt64) throws(JournalError) -> Int32 {
        let segmentPath = file(DataDirectory.segmentName(base: base))
        let descriptor: Int32
        do {
            descriptor = try syscalls.openFile(segmentPath, flags: O_WRONLY | O_CREAT | O_TRUNC)
        } catch {
            throw JournalError(error, path: segmentPath)
        }
        do throws(Errno) {
            try syscalls.writeAll(descriptor, SegmentHeader(baseSequence: base).encoded(), at: 0)
            try syscalls.dataSync(descriptor)
            try syscalls.syncDirectory(path)
            return descriptor
        } catch {
            syscalls.close(descriptor)
            try? syscalls.removeFile(segmentPath)
            // Of these calls only the directory's open names a path.
            throw JournalError(error, path: path)
        }
    }
}

/// The data directory's `LOCK`, held by a process that keeps files there without a journal open
/// (a cluster node's archive and secrets): the same lock the journal takes, so a second server on
/// the directory is refused whichever of the two holds it. The directory is made if missing.
public final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    private let syscalls: Syscalls

    public init(directory: String, syscalls: Syscalls = .live) throws(JournalError) {
        let dataDirectory = DataDirectory(path: directory, syscalls: syscalls)
        try dataDirectory.prepare()
        descriptor = try dataDirectory.lock()
        self.syscalls = syscalls
    }

    deinit { syscalls.close(descriptor) }
}
