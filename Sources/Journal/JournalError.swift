import Platform

/// Everything the journal can report. Append failures (`noSpace`, `io`, `closed`) are per batch and
/// transient; the others come from `WriteAheadLog.open` and need an operator, so their descriptions say
/// what happened and what to do.
public enum JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The disk (or the quota) is full. Nothing from the failed batch was kept; appends work again
    /// once space is freed.
    case noSpace
    /// Any other failed system call, with its errno. Nothing from the failed batch was kept.
    case io(Int32)
    /// `append` after `close()`.
    case closed
    /// The data directory or a file in it cannot be created, read or written by this user.
    case permissionDenied(path: String)
    /// The data directory path exists but is not a directory.
    case notADirectory(path: String)
    /// Another process holds the data directory's `LOCK` file.
    case directoryLocked(path: String)
    /// A segment or snapshot written by a different format version of the server.
    case unsupportedFormatVersion(file: String, found: UInt32, supported: UInt32)
    /// A file named like a segment that does not start with the segment magic.
    case notAJournalFile(file: String)
    /// Damage that is not a torn tail: acknowledged records may sit behind it.
    case corruptJournal(file: String, offset: Int, detail: String)
    /// The files on disk do not add up to a complete history (segments or snapshots missing).
    case incompleteHistory(detail: String)

    public var description: String {
        switch self {
        case .noSpace:
            return "journal write failed: no space left on device; the batch was discarded, free space and retry"
        case .io(let code):
            return "journal I/O error: \(Errno(code)); the batch was discarded"
        case .closed:
            return "journal is closed"
        case .permissionDenied(let path):
            return "permission denied on \(path): the server user needs read, write and execute rights on the data directory"
        case .notADirectory(let path):
            return "\(path) exists but is not a directory: point the data directory somewhere else or move that file"
        case .directoryLocked(let path):
            return "data directory \(path) is locked by another running server (LOCK is held); stop that server first, or use another directory"
        case .unsupportedFormatVersion(let file, let found, let supported):
            return "\(file) has format version \(found) but this server reads version \(supported); run the server version that wrote it (or convert the data), the file was not modified"
        case .notAJournalFile(let file):
            return "\(file) is not a journal segment (bad magic); move it out of the data directory and restart"
        case .corruptJournal(let file, let offset, let detail):
            return "journal \(file) is corrupt at offset \(offset) (\(detail)) and acknowledged records may follow it, so the server refuses to start rather than drop them; restore the data directory from a backup, or, accepting the loss of everything from that offset on, truncate the file to \(offset) bytes (and remove later segments) and restart"
        case .incompleteHistory(let detail):
            return "journal history is incomplete: \(detail); restore the missing files from a backup"
        }
    }

    /// Maps a failed call to the journal's error vocabulary: full disks are their own case because
    /// callers treat them differently (shed load, alert) from broken hardware. `path` is the file
    /// or directory the call named, if any: permission and not-a-directory failures name it so
    /// the operator knows what to fix; without one they are plain I/O errors.
    init(_ error: Errno, path: String?) {
        if error.isOutOfSpace {
            self = .noSpace
        } else if error.isPermissionDenied, let path {
            self = .permissionDenied(path: path)
        } else if error == .notADirectory, let path {
            self = .notADirectory(path: path)
        } else {
            self = .io(error.rawValue)
        }
    }
}
