public enum ArchiveError: Error, Equatable, Sendable {
    /// The file exists but is not an SQLite database.
    case notADatabase
    /// An SQLite database that belongs to another application; it is left untouched.
    case foreignDatabase(applicationID: Int32)
    /// Written by a newer version of this archive; this build does not know its schema.
    case newerSchema(version: Int32)
    case corrupt(String)
    /// The disk is full or failing; the transaction was rolled back.
    case storageUnavailable(String)
    /// Any other SQLite failure, with its result code.
    case sqlite(code: Int32, message: String)
}

/// Points inside `archive(_:throughSequence:)` where a test can make the write fail.
public enum ArchiveFaultPoint: Sendable, Equatable {
    case beforeBegin
    /// After each order's insert, inside the transaction.
    case afterInsert
    case beforeCommit
    case afterCommit
}
