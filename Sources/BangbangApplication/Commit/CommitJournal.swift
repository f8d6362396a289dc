// Where the application's committed changes are stored: the local write-ahead log (the default,
// one node on its own) or, in a cluster, the JetStream stream of the partition this node owns
// (Cluster/StreamJournal.swift). The application sees only this: appends completed in sequence
// order on the publishing queue, the next sequence, snapshots covering a sequence, and reading
// back what is stored.
import Journal

/// A journal the application commits to. Completions run in sequence order on the queue the
/// journal was made with (the publishing queue).
package protocol CommitJournal: AnyObject, Sendable {
    /// Stores `payload` as the next record; `completion` gets its sequence once it is durable.
    func appendRecord(_ payload: [UInt8], completion: @escaping @Sendable (Result<UInt64, JournalError>) -> Void)
    /// The sequence the next append will get.
    var nextSequence: UInt64 { get }
    /// Payload bytes appended since start: a snapshot is due after `--snapshot-bytes` of them.
    var bytesAppended: Int { get }
    /// Stores `contents` as the state through `sequence`, with the partition's inbox states at
    /// the same cut, and drops what recovery no longer needs, keeping every record after
    /// `keepingRecordsAfter` (what the order archive lacks). Blocks; call it off the completion
    /// queue.
    func storeSnapshot(_ contents: [UInt8], inboxStates: InboxStates, coveringThrough sequence: UInt64,
                       keepingRecordsAfter bound: UInt64) throws -> StoredSnapshot
    /// Everything stored, to rebuild memory after a failed append.
    func readBackAll() throws -> RecoveredLog
    /// Accepts appends again after `readBackAll` rebuilt memory.
    func resumeAfterFailure()
    func close() throws
}

extension CommitJournal {
    /// A snapshot of a partition whose personal events do not go over the inbox.
    func storeSnapshot(_ contents: [UInt8], coveringThrough sequence: UInt64,
                       keepingRecordsAfter bound: UInt64) throws -> StoredSnapshot {
        try storeSnapshot(contents, inboxStates: InboxStates(), coveringThrough: sequence, keepingRecordsAfter: bound)
    }
}

/// What carries a partition's personal events over the inbox, as a snapshot keeps it beside the
/// partition's state, so that the next owner sends again what was not delivered and numbers
/// nothing twice; each in InboxStateCodec's form: the partition's outbox, and an account
/// partition's inbox reader. Both absent on one node, whose events are handed over in process.
package struct InboxStates: Sendable, Equatable {
    package var outbox: [UInt8]?
    package var reader: [UInt8]?

    package init(outbox: [UInt8]? = nil, reader: [UInt8]? = nil) {
        self.outbox = outbox
        self.reader = reader
    }
}

/// What a journal holds: the newest snapshot's bytes, then the records after it.
package struct RecoveredLog: Sendable {
    package var snapshot: [UInt8]?
    /// The inbox states the snapshot was stored with.
    package var inboxStates = InboxStates()
    /// In a cluster, the revision of the snapshot's object (StreamJournal.storeSnapshot).
    package var snapshotRevision: UInt64 = 0
    /// The last sequence the snapshot covers (0 without one).
    package var snapshotSequence: UInt64
    package var records: [JournalRecord]
    var warnings: [String] = []

    package init(snapshot: [UInt8]?, inboxStates: InboxStates = InboxStates(), snapshotRevision: UInt64 = 0,
                 snapshotSequence: UInt64, records: [JournalRecord], warnings: [String] = []) {
        self.snapshot = snapshot
        self.inboxStates = inboxStates
        self.snapshotRevision = snapshotRevision
        self.snapshotSequence = snapshotSequence
        self.records = records
        self.warnings = warnings
    }
}

/// Where a snapshot went, for the log and metrics.
package struct StoredSnapshot: Sendable {
    /// The file or object written.
    var location: String
    var contentBytes: Int
    var storedBytes: Int
    /// What was dropped because the snapshot covers it (segments, or a purged range).
    var removed: [String]

    package init(location: String, contentBytes: Int, storedBytes: Int, removed: [String]) {
        self.location = location
        self.contentBytes = contentBytes
        self.storedBytes = storedBytes
        self.removed = removed
    }
}

extension WriteAheadLog: CommitJournal {
    package func appendRecord(_ payload: [UInt8], completion: @escaping @Sendable (Result<UInt64, JournalError>) -> Void) {
        append(payload, completion: completion)
    }

    package var bytesAppended: Int { statistics.bytesWritten }

    package func storeSnapshot(_ contents: [UInt8], inboxStates: InboxStates, coveringThrough sequence: UInt64,
                       keepingRecordsAfter bound: UInt64) throws -> StoredSnapshot {
        precondition(inboxStates == InboxStates(), "one node's journal has no inbox to keep the state of")
        let report = try writeSnapshot(contents: contents, coveringThrough: sequence, keepingRecordsAfter: bound)
        return StoredSnapshot(location: report.file, contentBytes: report.contentBytes, storedBytes: report.fileBytes,
                              removed: report.deletedSegments)
    }

    package func readBackAll() throws -> RecoveredLog {
        RecoveredLog(try readBack())
    }
}

extension RecoveredLog {
    package init(_ recovery: Recovery) {
        self.init(snapshot: recovery.snapshot, snapshotSequence: recovery.report.snapshotSequence,
                  records: recovery.records, warnings: recovery.report.warnings)
    }
}
