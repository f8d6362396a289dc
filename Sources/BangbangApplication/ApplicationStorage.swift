// What start-up hands the application: the journal its changes are committed to and what was
// recovered from it, the session secret, the order archive, and the ids it may hand out. Decided
// once, before the application exists, and the only thing that differs between deployments: the
// data directory's write-ahead log and files for a server on its own (`dataDirectory`), or a
// partition pair's streams on a cluster node, which the scale-out makes (the application never
// sees NATS). The application itself does not branch on where it runs.
import BangbangCore
import Dispatch
import Foundation
import InboxProtocol
import Journal
import OrderArchive

package struct ApplicationStorage: Sendable {
    /// Told of every batch the journal stores: how many records, and how long it took.
    package typealias BatchObserver = @Sendable (_ records: Int, _ seconds: Double) -> Void

    /// Opens the journal, its completions on `completionQueue` (the publishing queue), with what it
    /// recovered.
    package var openJournal: @Sendable (_ completionQueue: DispatchQueue, _ observer: @escaping BatchObserver) throws
        -> (journal: any CommitJournal, recovered: RecoveredLog)
    package var loadSessionSecret: @Sendable () throws -> [UInt8]
    /// The order archive, already open (a cluster node follows the shared history into it); nil
    /// opens `archive.sqlite` in the data directory.
    package var archive: OrderArchive? = nil
    /// Makes the data directory's archive fail its writes (tests).
    package var archiveFaultInjection: OrderArchive.FaultInjection? = nil
    /// The recovered state is a single node's being imported into a cluster: the application
    /// stores a snapshot of it before anything else (Durability.swift, `storeImportSnapshot`).
    package var isImport = false
    /// Called with each batch of closed orders before the archive stores it (a cluster's shared
    /// history); a throw keeps the batch in memory and the archiver tries again.
    package var beforeArchiving: (@Sendable ([ArchivedOrder]) throws -> Void)? = nil
    /// The account partition on a journal of its own, with the inbox between the two; nil keeps
    /// both partitions' records on `openJournal`'s.
    package var accountsPartition: AccountsPartitionStorage? = nil
    /// How many pairs of partitions the deployment has, and which of them this is: the board
    /// partition numbers orders, and (with an account partition of its own) registers users, with
    /// ids of the pair's residue.
    package var partitionCount = 1
    package var pair = 0

    package init(openJournal: @escaping @Sendable (DispatchQueue, @escaping BatchObserver) throws -> (journal: any CommitJournal, recovered: RecoveredLog),
                 loadSessionSecret: @escaping @Sendable () throws -> [UInt8]) {
        self.openJournal = openJournal
        self.loadSessionSecret = loadSessionSecret
    }

    /// A journal recovered elsewhere (a partition's stream), made on the publishing queue, and a
    /// session secret shared with other nodes.
    package static func journal(recovered: RecoveredLog, sessionSecret: [UInt8],
                                _ makeJournal: @escaping @Sendable (_ completionQueue: DispatchQueue, _ observer: @escaping BatchObserver) -> any CommitJournal)
        -> ApplicationStorage {
        ApplicationStorage(openJournal: { queue, observer in (makeJournal(queue, observer), recovered) },
                           loadSessionSecret: { sessionSecret })
    }

    /// The ids the pair hands out: every one while the deployment has one pair.
    var idSpace: IDSpace { IDSpace(partitions: partitionCount, partition: pair) }

    /// A server on its own: the write-ahead log, session secret and archive in
    /// `configuration.dataDirectory` (whose lock the log takes). `writerStartQueue` is where the
    /// log's writer starts each batch (the owners' target queue); `journalTestHook` lets tests
    /// adjust the log's configuration (fault injection), and `archiveFaultInjection` make archive
    /// writes fail.
    package static func dataDirectory(_ configuration: ServerConfiguration, logger: Logger, writerStartQueue: DispatchQueue?,
                                      journalTestHook: (@Sendable (inout JournalConfiguration) -> Void)? = nil,
                                      archiveFaultInjection: OrderArchive.FaultInjection? = nil) -> ApplicationStorage {
        let directory = configuration.dataDirectory
        let policy = configuration.fsyncPolicy
        let sendableQueue = writerStartQueue
        var storage = ApplicationStorage(openJournal: { completionQueue, observer in
            var journalConfiguration = JournalConfiguration(syncPolicy: Application.syncPolicy(policy))
            // Changes are applied in memory before they are appended, so a change queued behind a
            // failed one must not be written until memory has been rebuilt from disk.
            journalConfiguration.holdsAfterFailure = true
            journalConfiguration.preallocationSize = 2 << 20
            journalConfiguration.completionQueue = completionQueue
            journalConfiguration.writerStartQueue = sendableQueue
            if let flagFile = ProcessInfo.processInfo.environment[Application.simulatedFullDiskVariable], !flagFile.isEmpty {
                logger.warning("simulated_full_disk", ["detail": "journal writes fail with ENOSPC while \(flagFile) exists (test setting)"])
                journalConfiguration.simulateFullDisk(when: { access(flagFile, F_OK) == 0 })
            }
            journalConfiguration.batchObserver = observer
            if let configure = journalTestHook { configure(&journalConfiguration) }
            let (log, recovered) = try WriteAheadLog.open(directory: directory, configuration: journalConfiguration)
            return (log, RecoveredLog(recovered))
        }, loadSessionSecret: {
            try SecretFile.loadOrCreate(in: directory)
        })
        storage.archiveFaultInjection = archiveFaultInjection
        return storage
    }
}

/// The account partition on a journal of its own, as a cluster node that owns it hands it over
/// beside the board partition's.
package struct AccountsPartitionStorage: Sendable {
    /// The account partition's snapshot (its half, with its inbox states) and the records after it.
    package var recovered: RecoveredLog
    package var makeJournal: @Sendable (_ completionQueue: DispatchQueue, _ observer: @escaping ApplicationStorage.BatchObserver)
        -> any CommitJournal
    /// Connects the pair's two partitions through the inbox: given the states the snapshots kept
    /// and the account half the inbox feeds (on the publishing queue), the link and the route the
    /// publisher sends personal events through.
    package var linkInbox: @Sendable (InboxLinkParameters) -> (any InboxLink, PersonalEventRoute)

    package init(recovered: RecoveredLog,
                 makeJournal: @escaping @Sendable (DispatchQueue, @escaping ApplicationStorage.BatchObserver) -> any CommitJournal,
                 linkInbox: @escaping @Sendable (InboxLinkParameters) -> (any InboxLink, PersonalEventRoute)) {
        self.recovered = recovered
        self.makeJournal = makeJournal
        self.linkInbox = linkInbox
    }
}

/// What the inbox between a pair's partitions is made from.
package struct InboxLinkParameters: Sendable {
    package let sources: PartitionPairSources
    /// Each source's outbox and the account partition's reader, as the snapshots kept them.
    package let outboxes: [InboxSource: InboxOutbox.State]
    package let reader: InboxReader.State
    /// Where what the inbox brings is numbered into the personal streams, on `queue`.
    package let accounts: AccountPublisher
    package let queue: DispatchQueue
    package let logger: Logger
    package let metrics: InboxMetrics
}

/// The inbox between a pair's partitions when each has a journal of its own: the senders of the
/// pair's two sources and the follower of its account partition (the scale-out's `InboxWiring`).
package protocol InboxLink: Sendable {
    /// The inbox's name, for log lines.
    var name: String { get }
    /// How far the follower has applied the inbox.
    var appliedPosition: UInt64 { get }
    /// The follower's state, read on the publishing queue (where it applies).
    var readerState: InboxReader.State { get }
    /// Starts following the inbox.
    func start() throws
    /// Waits until every entry handed to the senders so far is stored and the follower has
    /// applied the inbox to its end: a node that took the partitions over calls it before it
    /// serves, so a device resuming finds its stream numbered as before. Blocks; throws after `bound`.
    func catchUp(within bound: Duration) throws
    /// Each sender's outbox once everything handed over so far is in it. Blocks; call it where
    /// nothing more is handed over meanwhile (a cut, with the owners suspended).
    func outboxStates() -> [InboxSource: InboxOutbox.State]
    /// Drops the inbox's messages through `position`, once the account partition's snapshot holds
    /// a reader at or past it. Blocks; call it off the publishing queue.
    func purge(through position: UInt64) throws
    func stop()
}

/// Storage that cannot be read or followed as recovery needs it: a snapshot's inbox state that
/// does not decode, an inbox that cannot be followed, an import that cannot be stored.
package struct StorageError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// The two sources of personal events an application commits for: its board partition `p<k>`
/// and its account partition `a<k>` (a single node's: `p0` and `a0`).
package struct PartitionPairSources: Sendable, Equatable {
    package let boards: InboxSource
    package let accounts: InboxSource

    package init(pair: Int) {
        boards = InboxSource(space: .boards, index: UInt16(pair))
        accounts = InboxSource(space: .accounts, index: UInt16(pair))
    }
}
