// Where every owner's commit ends: the journal append, and what happens once the record is
// durable. Completions run on the publishing queue (the journal's completion queue) in sequence
// order, so the reply goes out first, then the change is announced, then whatever must follow
// the announcement. Nobody hears of a change before its record is durable. Every durable record
// is noted to the archiver, with the order it closed if any (Archiver.swift), in the same order.
//
// There is a log per partition: the board partition's owners commit through one, the accounts owner
// through another, and each announces its records as that partition's, so a record's personal
// events leave marked with their source. On one node both logs write to the one local journal (a
// record's entry says which partition it belongs to, and a replay routes it back) and share one
// `CommitTracking`, since a failed append holds the whole journal; in a cluster each partition will
// have its own stream.
import BangbangCore
import BangbangStorage
import InboxProtocol
import Journal
import Synchronization

/// What every log over one journal shares: commits between append and completion, whether memory
/// is ahead of the disk, and who is told when an append fails.
package final class CommitTracking: Sendable {
    private let tracker = Mutex(CommitTracker())
    /// Told of every failed append, before the request that made it hears of it (schedules the
    /// rebuild from disk; see Durability.swift). Set once, before the first commit.
    private let storageFailureHandler = HandlerSlot<JournalError>()

    func withLock<Result: Sendable>(_ body: (inout CommitTracker) -> Result) -> Result {
        tracker.withLock { body(&$0) }
    }

    func onStorageFailure(_ handler: @escaping @Sendable (JournalError) -> Void) {
        storageFailureHandler.set(handler)
    }

    fileprivate func noteFailure(_ error: JournalError) {
        storageFailureHandler(error)
    }
}

package final class CommitLog: Sendable {
    /// The partition whose records this log appends.
    let source: InboxSource
    let journal: any CommitJournal
    let tracking: CommitTracking
    package let publisher: Publisher
    let archiver: Archiver

    init(source: InboxSource, journal: any CommitJournal, tracking: CommitTracking, publisher: Publisher,
         archiver: Archiver) {
        self.source = source
        self.journal = journal
        self.tracking = tracking
        self.publisher = publisher
        self.archiver = archiver
    }

    /// Journals `entry` (already applied by its owner). Call on the owner's queue. If the record
    /// cannot be stored, `onDurable` gets `storage_unavailable`, nothing is announced, and the
    /// owners' memory is rebuilt from disk, because the change is already applied there.
    /// `closing`: the order as the change left it, when the change left it closed.
    func append(_ entry: JournalEntry, closing: Order? = nil, announcing announcement: Announcement,
                onDurable: @escaping @Sendable (Result<Void, DomainError>) -> Void,
                afterPublish: (@Sendable () -> Void)? = nil) {
        let bytes = entry.encoded()
        tracking.withLock { $0.inFlight += 1 }
        journal.appendRecord(bytes) { [self] result in
            switch result {
            case .success(let sequence):
                archiver.noteDurable(sequence: sequence, closing: closing)
                onDurable(.success(()))
                publisher.publish(announcement, from: source, journalSequence: sequence, then: afterPublish)
            case .failure(let error):
                // The rebuild is scheduled before anyone hears of the failure.
                tracking.noteFailure(error)
                onDurable(.failure(DomainError(.storageUnavailable,
                    "the server could not store this change (\(error.shortDescription)); nothing was changed, try again later")))
            }
            // Last, so a snapshot's cut that waits for no commit in flight also sees this
            // change's pushes in the personal streams and board numbering.
            tracking.withLock { $0.inFlight -= 1 }
        }
    }
}

extension JournalError {
    /// A few words for a client message; the full description goes to the log only.
    var shortDescription: String {
        switch self {
        case .noSpace: "disk full"
        case .closed: "shutting down"
        default: "storage error"
        }
    }
}
