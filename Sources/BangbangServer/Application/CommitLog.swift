// Where every owner's commit ends: the journal append, and what happens once the record is
// durable. Completions run on the publishing queue (the journal's completion queue) in sequence
// order, so the reply goes out first, then the change is announced, then whatever must follow
// the announcement. Nobody hears of a change before its record is durable. Every durable record
// is noted to the archiver, with the order it closed if any (Archiver.swift), in the same order.
import BangbangCore
import BangbangStorage
import Journal
import Synchronization

final class CommitLog: Sendable {
    let journal: any CommitJournal
    let publisher: Publisher
    let archiver: Archiver
    /// Commits between append and completion, and whether memory is ahead of the disk.
    let tracker = Mutex(CommitTracker())
    /// Told of every failed append, before the request that made it hears of it (schedules the
    /// rebuild from disk; see Durability.swift). Set once, before the first commit.
    private let storageFailureHandler = Mutex<(@Sendable (JournalError) -> Void)?>(nil)

    init(journal: any CommitJournal, publisher: Publisher, archiver: Archiver) {
        self.journal = journal
        self.publisher = publisher
        self.archiver = archiver
    }

    func onStorageFailure(_ handler: @escaping @Sendable (JournalError) -> Void) {
        storageFailureHandler.withLock { $0 = handler }
    }

    /// Journals `entry` (already applied by its owner). Call on the owner's queue. If the record
    /// cannot be stored, `onDurable` gets `storage_unavailable`, nothing is announced, and the
    /// owners' memory is rebuilt from disk, because the change is already applied there.
    /// `closing`: the order as the change left it, when the change left it closed.
    func append(_ entry: JournalEntry, closing: Order? = nil, announcing announcement: Announcement,
                onDurable: @escaping @Sendable (Result<Void, DomainError>) -> Void,
                afterPublish: (@Sendable () -> Void)? = nil) {
        let bytes = entry.encoded()
        tracker.withLock { $0.inFlight += 1 }
        journal.appendRecord(bytes) { [self] result in
            switch result {
            case .success(let sequence):
                archiver.noteDurable(sequence: sequence, closing: closing)
                onDurable(.success(()))
                publisher.publish(announcement, journalSequence: sequence)
                afterPublish?()
            case .failure(let error):
                // The rebuild is scheduled before anyone hears of the failure.
                storageFailureHandler.withLock { $0 }?(error)
                onDurable(.failure(DomainError(.storageUnavailable,
                    "the server could not store this change (\(error.shortDescription)); nothing was changed, try again later")))
            }
            // Last, so a snapshot's cut that waits for no commit in flight also sees this
            // change's pushes in the personal streams and board numbering.
            tracker.withLock { $0.inFlight -= 1 }
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
