import CSQLite
#if canImport(Glibc)
import Glibc
#endif

extension OrderArchive {
    /// Copies a consistent snapshot of the archive to `destination` with SQLite's online-backup
    /// API, while writes go on. The copy is made beside the destination and renamed into place,
    /// so `destination` is either the old file or a complete backup.
    public func backup(to destination: String) throws(ArchiveError) {
        try withReader { (source) throws(ArchiveError) in try Self.copy(source, to: destination) }
    }

    /// `backup(to:)` of the archive file at `path`, read through a read-only connection, so a
    /// process other than the server (`bangbang admin backup`) never writes to it, not even to
    /// upgrade an older schema the running server still uses.
    public static func backup(archiveAt path: String, to destination: String) throws(ArchiveError) {
        let source = try Connection(path: path, readOnly: true)
        let applicationID = Int32(truncatingIfNeeded: try source.integer("PRAGMA application_id"))
        guard applicationID == Schema.applicationID else { throw .foreignDatabase(applicationID: applicationID) }
        try copy(source, to: destination)
    }

    private static func copy(_ source: Connection, to destination: String) throws(ArchiveError) {
        let temporary = destination + ".tmp"
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
        do throws(ArchiveError) {
            let target = try Connection(path: temporary, readOnly: false)
            guard let backup = sqlite3_backup_init(target.handle, "main", source.handle, "main") else {
                throw target.error(sqlite3_errcode(target.handle))
            }
            let stepped = sqlite3_backup_step(backup, -1)
            let finished = sqlite3_backup_finish(backup)
            guard stepped == SQLITE_DONE else { throw target.error(stepped) }
            guard finished == SQLITE_OK else { throw target.error(finished) }
            // The copy carries the source's WAL flag; checkpoint so the file alone is complete.
            try target.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
            throw error
        }
        guard rename(temporary, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .storageUnavailable("rename \(temporary): \(reason)")
        }
    }
}
