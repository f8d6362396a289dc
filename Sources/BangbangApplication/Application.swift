// The application: every piece of domain state, its owner, the journal, and the publisher that
// tells people about committed changes. Built at start-up from an `ApplicationStorage` (the
// journal and what it recovered, the session secret, the archive) and shared by every
// connection. It holds no connection: the loops' registries belong to the server.
//
// Start-up is recovery: open the journal (which takes the data directory's lock), load the
// snapshot, replay the journal through the same `apply` + `publish` path that live changes take
// (so the personal streams are rebuilt with the same numbering), then apply what came due while
// the server was down. Only then does the server accept connections. Where the journal lives
// (the data directory, or a cluster partition's stream) is the storage's business: the same
// recovery runs either way. Snapshots, the final snapshot at shutdown and the rebuild after a
// failed journal write are in Durability.swift. The order archive is opened next to the journal
// (ArchiveFile.swift); once memory is recovered, every closed order in it is handed to the
// archiver, which stores whatever the archive lacks (Archiver.swift).
import BangbangCore
import BangbangStorage
import BangbangProtocol
import Crypto
import Dispatch
import Foundation
import InboxProtocol
import Journal
import OrderArchive
import SocketServer
import Synchronization

package final class Application: @unchecked Sendable {
    let configuration: ServerConfiguration
    package let logger: Logger
    package let metrics: ServerMetrics
    package let clock: @Sendable () -> Timestamp
    /// Where the application says the process must end (a journal that cannot be read back).
    package let exits: ExitRequests
    /// The local write-ahead log, or in a cluster the owned partition's stream (CommitJournal.swift).
    /// With the account partition on a journal of its own, the board partition's.
    let journal: any CommitJournal
    /// The account partition's journal: `journal` itself, unless the storage gave the account
    /// partition one of its own (ApplicationStorage.swift).
    let accountsJournal: any CommitJournal
    /// The inbox between the partitions when they have a journal each; nil on one journal.
    let inbox: (any InboxLink)?
    /// Closed orders, in `archive.sqlite` in the data directory (ArchiveFile.swift).
    let archive: OrderArchive
    /// Writes closed orders into `archive` and tells the shards what it holds (Archiver.swift).
    let archiver: Archiver
    /// The commit logs of the board partition (every shard) and of the account partition, over
    /// `journal`, and what they share (CommitLog.swift).
    let boardsLog: CommitLog
    let accountsLog: CommitLog
    let tracking = CommitTracking()
    /// The partitions this application commits for, as sources of personal events: `p0` and `a0`
    /// on a single node; `p<k>` and `a<k>` for a cluster node's pair `k`.
    let sources: PartitionPairSources
    /// The serials the board partition's shards hand out: every one on a single node, those of
    /// the partition's residue with several, so an order's id names its partition.
    package let orderSerials: IDSpace
    package let publisher: Publisher
    /// Runners other cluster nodes report watching (RunnersOnline.swift), for `board.stats`.
    package let runnersElsewhere = RunnersElsewhere()
    package let accounts: AccountsOwner
    package let layout: BoardLayout
    package let shards: [ShardOwner]
    package let orderRules: OrderRules
    let tokenSecret: [UInt8]
    let passwordHasher: PasswordHasher
    let sms: SMSProvider
    /// Concurrent: history queries read the archive here, each on a pooled reader connection,
    /// so no owner's queue ever waits for the disk.
    let historyQueue = DispatchQueue(label: "bangbang.history", qos: .userInitiated, attributes: .concurrent)
    /// Password hashing is slow on purpose (and takes ~16 MiB each); it runs here, never on an
    /// owner's queue. Serial: a burst of logins waits its turn instead of taking every core and
    /// gigabytes of memory, and the accounts store keeps serving everyone else meanwhile.
    let hashingQueue = DispatchQueue(label: "bangbang.passwords", qos: .userInitiated)
    /// Orders published per type in the last minute, for `admin.stats`.
    let recentPublishes = RecentCounts<OrderType>()
    /// Requests per second a new connection may make (0: unlimited); a reload may change it.
    package let connectionRequestRate: Mutex<Int>
    /// Serial: snapshot cuts and rebuilds after storage failures, so they never overlap.
    let maintenanceQueue = DispatchQueue(label: "bangbang.durability", qos: .utility)
    /// Serial: encoding and writing snapshots, off every owner's queue.
    let snapshotQueue = DispatchQueue(label: "bangbang.snapshots", qos: .utility)
    /// When and at what journal size the last snapshot was taken.
    let snapshotSchedule = Mutex(SnapshotSchedule())

    /// `ownersTarget`: the queue the owners' queues and the publisher's run on. A server with one
    /// event loop passes the loop's queue, so a request goes loop → owner → journal → loop without
    /// ever changing thread (each queue still runs its blocks in order, never two at once); nil
    /// gives every owner its own thread, for servers with several loops and cores.
    package init(configuration: ServerConfiguration, logger: Logger, metrics: ServerMetrics,
         clock: @escaping @Sendable () -> Timestamp, sms: SMSProvider,
         passwordHasher: PasswordHasher = PasswordHasher(),
         ownersTarget: DispatchQueue? = nil, exits: ExitRequests = ExitRequests(), storage: ApplicationStorage) throws {
        self.configuration = configuration
        self.exits = exits
        self.logger = logger
        self.metrics = metrics
        self.clock = clock
        self.sms = sms
        self.passwordHasher = passwordHasher
        self.connectionRequestRate = Mutex(configuration.requestsPerSecond)
        self.orderRules = Self.orderRules(from: configuration)

        var policy = AccountPolicy()
        policy.campuses = configuration.campuses
        policy.codeLimitPerIP = configuration.smsPerIPHourly == 0 ? Int.max : configuration.smsPerIPHourly
        policy.codeResendInterval = .seconds(configuration.smsResendSeconds)
        var adminPhones: Set<PhoneNumber> = []
        for phone in configuration.adminPhones {
            do { adminPhones.insert(try PhoneNumber(parsing: phone)) } catch {
                throw ConfigurationError("invalid --admin-phone '\(phone)': \(error.message)")
            }
        }
        policy.administratorPhones = adminPhones
        // A pair registers users (when its account partition has a journal of its own) and numbers
        // orders with ids of its own residue, so ids never collide across pairs: every id while the
        // deployment has one pair, as on a single node.
        let space = storage.idSpace
        if storage.accountsPartition != nil { policy.userIDs = space }
        sources = PartitionPairSources(pair: storage.pair)
        orderSerials = space
        let sources = sources

        // Serial: journal completions (a batch per block), so replies and pushes of durable
        // changes leave in sequence order.
        let publishingQueue = DispatchQueue(label: "bangbang.commits", qos: .userInitiated, target: ownersTarget)
        let observeBatch: ApplicationStorage.BatchObserver = { [metrics] records, seconds in
            metrics.journalBatchRecords.observe(Double(records))
            metrics.journalFsyncLatency.observe(seconds)
        }
        let (journal, recovery) = try storage.openJournal(publishingQueue, observeBatch)
        self.journal = journal
        do {
            if let given = storage.archive {
                archive = given
            } else {
                try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
                archive = try Self.openArchive(in: configuration.dataDirectory, faultInjection: storage.archiveFaultInjection)
            }
        } catch {
            // Give the data directory's lock back: the caller may fix the file and try again.
            try? journal.close()
            throw error
        }
        let streams = PersonalStreams(capacity: configuration.streamEvents, byteLimit: configuration.streamBytes)
        let accountsRecovery: RecoveredLog
        var wiring: (any InboxLink)?
        let publisher: Publisher
        if let partitioned = storage.accountsPartition {
            accountsJournal = partitioned.makeJournal(publishingQueue, observeBatch)
            accountsRecovery = partitioned.recovered
            let states = try Self.inboxStates(boards: recovery.inboxStates, accounts: accountsRecovery.inboxStates, of: sources)
            publisher = Publisher(queue: publishingQueue, streams: streams) { accounts in
                let (made, route) = partitioned.linkInbox(InboxLinkParameters(
                    sources: sources, outboxes: states.outboxes, reader: states.reader, accounts: accounts,
                    queue: publishingQueue, logger: logger, metrics: metrics.inbox))
                wiring = made
                return route
            }
        } else {
            accountsJournal = journal
            accountsRecovery = RecoveredLog(snapshot: nil, snapshotSequence: 0, records: [])
            publisher = Publisher(queue: publishingQueue, streams: streams)
        }
        inbox = wiring
        self.publisher = publisher
        let archiver = Archiver(archive: archive, logger: logger, metrics: metrics, beforeStoring: storage.beforeArchiving)
        self.archiver = archiver
        let boardsLog = CommitLog(source: sources.boards, journal: journal, tracking: tracking,
                                  publisher: publisher, archiver: archiver)
        let accountsLog = CommitLog(source: sources.accounts, journal: accountsJournal, tracking: tracking,
                                    publisher: publisher, archiver: archiver)
        self.boardsLog = boardsLog
        self.accountsLog = accountsLog
        self.tokenSecret = try storage.loadSessionSecret()
        let layout = BoardLayout(shardsPerType: configuration.shardsPerType)
        self.layout = layout

        // An import brings one node's journal: a whole snapshot and both partitions' records, in
        // one order, which numbers their personal events here as it did there (and nothing of it
        // goes over the inbox); the import's snapshot then stores both partitions' state in one
        // write (Durability.swift, `storeImportSnapshot`).
        let isImport = storage.isImport
        let boardsHalf: BoardsPartitionState?, accountsHalf: AccountsPartitionState?
        if wiring != nil && !isImport {
            // `p0`'s object holds its half, or both partitions' state as an import stored it.
            var whole: SnapshotContents?
            do {
                boardsHalf = try recovery.snapshot.map { try BoardsPartitionState.decode($0) }
            } catch {
                guard let bytes = recovery.snapshot, let imported = try? SnapshotContents.decode(bytes) else { throw error }
                whole = imported
                boardsHalf = imported.boardsPartition
            }
            accountsHalf = try accountsRecovery.snapshot.map { try AccountsPartitionState.decode($0) } ?? whole?.accountsPartition
        } else {
            let snapshot = try recovery.snapshot.map { try SnapshotContents.decode($0) }
            (boardsHalf, accountsHalf) = (snapshot?.boardsPartition, snapshot?.accountsPartition)
        }
        if let boardsHalf, boardsHalf.shards.count != layout.shardCount {
            throw ConfigurationError("the snapshot has \(boardsHalf.shards.count) board shards but --shards-per-type "
                                     + "gives \(layout.shardCount); start with --shards-per-type \(boardsHalf.shards.count / OrderType.allCases.count)")
        }
        // The owners start empty and receive the recovered state once it is built, so the
        // recovered collections are never shared with a copy (the first change would copy them).
        accounts = AccountsOwner(store: AccountStore(policy: policy), log: accountsLog, clock: clock, target: ownersTarget)
        shards = (0..<layout.shardCount).map { index in
            ShardOwner(shard: BoardShard(index: index, serials: space), type: layout.type(ofShard: index), log: boardsLog, clock: clock,
                       target: ownersTarget)
        }
        if let boardsHalf { publisher.boards.sequences.withLock { $0 = boardsHalf.boardSequences } }
        if let accountsHalf { publisher.accounts.streams.restore(accountsHalf.streams, now: clock()) }
        for warning in recovery.warnings { logger.warning("journal_recovery", ["detail": warning]) }
        var state = try OwnedState(boards: boardsHalf, accounts: accountsHalf, policy: policy, layout: layout, orderSerials: space)
        try replay(recovery.records, into: &state, publishing: true, inProcess: isImport)
        if wiring != nil { try replay(accountsRecovery.records, into: &state, publishing: true) }
        install(state)
        refreshApprovedRunners()
        if let wiring {
            do { try wiring.start() } catch {
                throw StorageError("cannot follow the inbox of \(sources.accounts): \(error)")
            }
            let started = ContinuousClock.now
            try wiring.catchUp(within: Self.inboxCatchUpBound)
            logger.info("inbox_caught_up", ["inbox": wiring.name, "position": wiring.appliedPosition,
                                            "ms": Int((ContinuousClock.now - started).seconds * 1000)])
        }
        snapshotSchedule.withLock { $0.lastProgress = recovery.snapshotSequence + accountsRecovery.snapshotSequence }
        tracking.onStorageFailure { [weak self] error in self?.noteStorageFailure(error) }
        archiver.onArchived { [weak self] stored in self?.tellShards(archived: stored) }
        // Whatever closed but was not archived before the last stop (or was archived by a server
        // from before the archive, which kept all history in its snapshots) is archived now.
        let closed = shards.flatMap { $0.shard.orders.values.filter(\.status.isTerminal) }
        archiver.noteRecovered(closed, through: journal.nextSequence - 1)
        if isImport { try storeImportSnapshot() }
        logger.info("recovered", ["snapshot_sequence": recovery.snapshotSequence,
                                  "records": recovery.records.count + accountsRecovery.records.count, "users": accounts.store.state.accounts.count,
                                  "orders": shards.reduce(0) { $0 + $1.shard.orders.count }])
    }

    /// An application on the journal and files of `configuration.dataDirectory`: a server on its
    /// own, and the tools and tests that open a data directory.
    package convenience init(configuration: ServerConfiguration, logger: Logger, metrics: ServerMetrics,
                     clock: @escaping @Sendable () -> Timestamp, sms: SMSProvider,
                     passwordHasher: PasswordHasher = PasswordHasher(), ownersTarget: DispatchQueue? = nil,
                     journalTestHook: (@Sendable (inout JournalConfiguration) -> Void)? = nil,
                     archiveFaultInjection: OrderArchive.FaultInjection? = nil) throws {
        try self.init(configuration: configuration, logger: logger, metrics: metrics, clock: clock, sms: sms,
                      passwordHasher: passwordHasher, ownersTarget: ownersTarget,
                      storage: .dataDirectory(configuration, logger: logger, writerStartQueue: ownersTarget,
                                              journalTestHook: journalTestHook, archiveFaultInjection: archiveFaultInjection))
    }

    /// The outboxes and the reader's state the partitions' snapshots kept (empty without them).
    package static func inboxStates(boards: InboxStates, accounts: InboxStates, of sources: PartitionPairSources) throws
        -> (outboxes: [InboxSource: InboxOutbox.State], reader: InboxReader.State) {
        var outboxes: [InboxSource: InboxOutbox.State] = [:]
        do {
            if let bytes = boards.outbox { outboxes[sources.boards] = try InboxStateCodec.decodeOutbox(bytes[...]) }
            if let bytes = accounts.outbox { outboxes[sources.accounts] = try InboxStateCodec.decodeOutbox(bytes[...]) }
            return (outboxes, try accounts.reader.map { try InboxStateCodec.decodeReader($0[...]) } ?? InboxReader.State())
        } catch {
            throw StorageError("a partition's snapshot holds an inbox state that cannot be read: \(error)")
        }
    }

    /// How long a node that took the partitions over waits for its inbox to be applied before
    /// it gives up (and exits, for a supervisor to start it again).
    static let inboxCatchUpBound: Duration = .seconds(30)

    /// The order rules of this deployment: the defaults, with what the operator set.
    package static func orderRules(from configuration: ServerConfiguration) -> OrderRules {
        var rules = OrderRules()
        rules.cancellationGrace = Int64(configuration.cancelGraceSeconds) * 1000
        rules.cancellationFee = Cents(configuration.cancelFee)
        rules.autoConfirmAfter = Int64(configuration.autoConfirmHours) * 3_600_000
        rules.ratingWindow = Int64(configuration.ratingWindowDays) * 86_400_000
        rules.campuses = configuration.campuses
        return rules
    }

    static func syncPolicy(_ policy: FsyncPolicy) -> SyncPolicy {
        switch policy {
        case .always: .always
        case .never: .never
        case .interval(let milliseconds): .interval(milliseconds: milliseconds)
        }
    }

    /// Starts live delivery to the loops' registries (indexed by loop) and the timers. Call
    /// once, after construction and before the server accepts connections.
    package func attach(to registries: [LoopRegistry]) {
        publisher.attach(to: registries)
        for owner in shards {
            owner.perform { $0.applyDueTransitions() }
        }
        accounts.startSessionPurge()
        for owner in shards { owner.startArchiveSweeps(every: Self.archiveSweepInterval, rules: orderRules,
                                                     counting: metrics.ordersMovedToArchive) }
        scheduleSnapshots()
    }

    // MARK: Replay

    /// Applies journal records, in order, to owner states that are not installed yet. With
    /// `publishing` (start-up) each change also goes through `publish`, which rebuilds the
    /// personal streams and board numbering exactly as they were numbered live (`inProcess`:
    /// see `Publisher.publish`).
    func replay(_ records: [JournalRecord], into state: inout OwnedState, publishing: Bool, inProcess: Bool = false) throws {
        for record in records {
            let entry: JournalEntry
            do { entry = try JournalEntry.decode(record.payload) } catch {
                throw JournalEntryError(message: "journal record \(record.sequence) cannot be read: \(error). "
                                        + "It was written by an incompatible server version; restore from a backup or "
                                        + "run the version that wrote it.")
            }
            switch entry {
            case .account(let event):
                state.accounts.apply(event)
                if publishing { publisher.publish(Announcement(event, at: clock()), from: sources.accounts,
                                                  journalSequence: record.sequence, inProcess: inProcess) }
            case .order(let shard, let event):
                guard state.shards.indices.contains(shard) else {
                    throw JournalEntryError(message: "journal record \(record.sequence) names board shard \(shard), "
                                            + "but this server has \(state.shards.count); start with the --shards-per-type it was written with")
                }
                let applied = state.shards[shard].apply(event)
                if publishing {
                    publisher.publish(Announcement(applied, actorView: nil, includingFeed: false), from: sources.boards,
                                      journalSequence: record.sequence, inProcess: inProcess)
                }
            }
        }
    }

    /// Hands recovered state to the owners. Only while no owner runs: in `init`, or with every
    /// owner suspended (Durability.swift).
    func install(_ state: OwnedState) {
        accounts.store = state.accounts
        for (owner, shard) in zip(shards, state.shards) { owner.shard = shard }
    }

    /// Stops following the inbox and closes the journals. At shutdown, after the final snapshot.
    package func closeJournals() throws {
        inbox?.stop()
        if inbox != nil { try accountsJournal.close() }
        try journal.close()
    }

    package func boardSequence(of type: OrderType) -> UInt64 { publisher.boards.sequence(of: type) }

    // MARK: Archive

    /// How often each shard looks for archived orders past their rating window.
    static let archiveSweepInterval: DispatchTimeInterval = .seconds(2)

    /// Hands each shard's owner the part of a committed archive batch that is its own.
    private func tellShards(archived stored: [(id: OrderID, revision: Int)]) {
        var byShard: [Int: [(id: OrderID, revision: Int)]] = [:]
        for entry in stored { byShard[entry.id.shard, default: []].append(entry) }
        for (index, entries) in byShard where shards.indices.contains(index) {
            shards[index].perform { $0.noteArchived(entries) }
        }
    }

    // MARK: Runners

    func refreshApprovedRunners() {
        let store = accounts.store
        let approved = Set(store.state.accounts.keys.filter { store.canRunErrands($0) })
        publisher.accounts.approvedRunners.withLock { $0 = approved }
    }

    package func isApprovedRunner(_ user: UserID) -> Bool { publisher.accounts.isApprovedRunner(user) }
}
