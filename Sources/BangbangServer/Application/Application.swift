// The application: every piece of domain state, its owner, the journal, and how a committed
// change reaches people. Built by `BangbangServer` at start-up; shared by every connection.
//
// Start-up is recovery: open the journal (which takes the data directory's lock), load the
// snapshot, replay the journal through the same `apply` + `publish` path that live changes take
// (so the personal streams are rebuilt with the same numbering), then apply what came due while
// the server was down. Only then does the server accept connections. Snapshots, the final
// snapshot at shutdown and the rebuild after a failed journal write are in Durability.swift.
import BangbangCore
import BangbangProtocol
import Crypto
import Dispatch
import Foundation
import Journal
import SocketServer

/// A change that has been applied to its owner, with what pushes need.
enum AppliedChange: Sendable {
    case account(AccountEvent, at: Timestamp)
    /// `actorView`: the order as the user who made the change sees it, already encoded for the
    /// reply; their own push reuses it.
    case order(AppliedOrderChange, actorView: EncodedOrderView? = nil)
}

/// One viewer's view of an order, encoded (`OrderWire.encoded`).
struct EncodedOrderView: Sendable {
    let viewer: UserID
    let json: [UInt8]
}

final class Application: @unchecked Sendable {
    let configuration: ServerConfiguration
    let logger: Logger
    let metrics: ServerMetrics
    let clock: @Sendable () -> Timestamp
    let journal: Journal
    let accounts: AccountsExecutor
    let layout: BoardLayout
    let shards: [ShardExecutor]
    let orderRules: OrderRules
    let streams = PersonalStreams()
    let tokenSecret: [UInt8]
    let passwordHasher: PasswordHasher
    let sms: SMSProvider
    /// Password hashing is slow on purpose (and takes ~16 MiB each); it runs here, never on an
    /// owner's queue. Serial: a burst of logins waits its turn instead of taking every core and
    /// gigabytes of memory, and the accounts store keeps serving everyone else meanwhile.
    let hashingQueue = DispatchQueue(label: "bangbang.passwords", qos: .userInitiated)
    /// Approved runners, mirrored from the accounts store so accepts and counts need no hop.
    let approvedRunners = Mutex<Set<UserID>>([])
    /// Orders published per type in the last minute, for `admin.stats`.
    let recentPublishes = RecentCounts<OrderType>()
    private(set) var registries: [LoopRegistry] = []
    let feedWatchers = WatcherTotal()
    /// Requests per second a new connection may make (0: unlimited); a reload may change it.
    let connectionRequestRate: Mutex<Int>
    let boardSequences = Mutex<[OrderType: UInt64]>([:])
    private let isRecovering = Mutex(true)
    /// Commits in flight and storage failures, for snapshots' cuts and for recovery.
    let commits = Mutex(CommitTracker())
    /// Serial: journal completions (a batch per block), so replies and pushes of durable changes
    /// leave in sequence order. See `init`'s `ownersTarget`.
    let commitQueue: DispatchQueue
    /// Serial: snapshot cuts and rebuilds after storage failures, so they never overlap.
    let maintenanceQueue = DispatchQueue(label: "bangbang.durability", qos: .utility)
    /// Serial: encoding and writing snapshots, off every owner's queue.
    let snapshotQueue = DispatchQueue(label: "bangbang.snapshots", qos: .utility)
    /// When and at what journal size the last snapshot was taken.
    let snapshotSchedule = Mutex(SnapshotSchedule())

    /// `ownersTarget`: the queue the owners' queues and `commitQueue` run on. A server with one
    /// event loop passes the loop's queue, so a request goes loop → owner → journal → loop without
    /// ever changing thread (each queue still runs its blocks in order, never two at once); nil
    /// gives every owner its own thread, for servers with several loops and cores.
    /// `journalTestHook` lets tests adjust the journal's configuration (fault injection).
    init(configuration: ServerConfiguration, logger: Logger, metrics: ServerMetrics,
         clock: @escaping @Sendable () -> Timestamp, sms: SMSProvider,
         passwordHasher: PasswordHasher = PasswordHasher(),
         ownersTarget: DispatchQueue? = nil,
         journalTestHook: ((inout JournalConfiguration) -> Void)? = nil) throws {
        self.configuration = configuration
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
        var adminPhones: Set<PhoneNumber> = []
        for phone in configuration.adminPhones {
            do { adminPhones.insert(try PhoneNumber(parsing: phone)) } catch {
                throw ConfigurationError("invalid --admin-phone '\(phone)': \(error.message)")
            }
        }
        policy.administratorPhones = adminPhones

        var journalConfiguration = JournalConfiguration(syncPolicy: Self.syncPolicy(configuration.fsyncPolicy))
        // Changes are applied in memory before they are appended, so a change queued behind a
        // failed one must not be written until memory has been rebuilt from disk.
        journalConfiguration.holdsAfterFailure = true
        journalConfiguration.preallocationSize = 2 << 20
        commitQueue = DispatchQueue(label: "bangbang.commits", qos: .userInitiated, target: ownersTarget)
        journalConfiguration.completionQueue = commitQueue
        journalConfiguration.writerStartQueue = ownersTarget
        if let flagFile = ProcessInfo.processInfo.environment[Self.simulatedFullDiskVariable], !flagFile.isEmpty {
            logger.warning("simulated_full_disk", ["detail": "journal writes fail with ENOSPC while \(flagFile) exists (test setting)"])
            journalConfiguration.simulateFullDisk(when: { access(flagFile, F_OK) == 0 })
        }
        if let configure = journalTestHook { configure(&journalConfiguration) }
        let (journal, recovery) = try Journal.open(directory: configuration.dataDirectory, configuration: journalConfiguration)
        self.journal = journal
        self.tokenSecret = try SecretFile.loadOrCreate(in: configuration.dataDirectory)
        let layout = BoardLayout(shardsPerType: configuration.shardsPerType)
        self.layout = layout

        let snapshot = try recovery.snapshot.map { try SnapshotContents.decode($0) }
        if let snapshot, snapshot.shards.count != layout.shardCount {
            throw ConfigurationError("the snapshot has \(snapshot.shards.count) board shards but --shards-per-type "
                                     + "gives \(layout.shardCount); start with --shards-per-type \(snapshot.shards.count / OrderType.allCases.count)")
        }
        // The owners start empty and receive the recovered state once it is built, so the
        // recovered collections are never shared with a copy (the first change would copy them).
        accounts = AccountsExecutor(store: AccountStore(policy: policy), target: ownersTarget)
        shards = (0..<layout.shardCount).map { index in
            ShardExecutor(shard: BoardShard(index: index), type: layout.type(ofShard: index), target: ownersTarget)
        }
        if let snapshot {
            streams.restore(snapshot.streams)
            boardSequences.withLock { $0 = snapshot.boardSequences }
        }
        for warning in recovery.report.warnings { logger.warning("journal_recovery", ["detail": warning]) }
        var state = OwnedState(snapshot, policy: policy, layout: layout)
        try replay(recovery.records, into: &state, publishing: true)
        install(state)
        refreshApprovedRunners()
        snapshotSchedule.withLock { $0.lastSequence = recovery.report.snapshotSequence }
        logger.info("recovered", ["snapshot_sequence": recovery.report.snapshotSequence,
                                  "records": recovery.records.count, "users": accounts.store.state.accounts.count,
                                  "orders": shards.reduce(0) { $0 + $1.shard.orders.count }])
    }

    /// The order rules of this deployment: the defaults, with what the operator set.
    static func orderRules(from configuration: ServerConfiguration) -> OrderRules {
        var rules = OrderRules()
        rules.cancellationGrace = Int64(configuration.cancelGraceSeconds) * 1000
        rules.cancellationFee = Cents(configuration.cancelFee)
        rules.autoConfirmAfter = Int64(configuration.autoConfirmHours) * 3_600_000
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

    /// Connects the application to the transport's loops and starts its timers. Call once,
    /// after construction and before the server accepts connections.
    func attach(to loops: [EventLoop]) {
        registries = loops.map { LoopRegistry(loop: $0, metrics: metrics, watcherTotal: feedWatchers) }
        isRecovering.withLock { $0 = false }
        for executor in shards {
            executor.perform { [self] executor in applyDueTransitions(executor) }
        }
        scheduleSessionPurge()
        scheduleSnapshots()
    }

    func registry(for loop: EventLoop) -> LoopRegistry { registries[loop.index] }

    // MARK: Replay

    /// Applies journal records, in order, to owner states that are not installed yet. With
    /// `publishing` (start-up) each change also goes through `publish`, which rebuilds the
    /// personal streams and board numbering exactly as they were numbered live.
    func replay(_ records: [JournalRecord], into state: inout OwnedState, publishing: Bool) throws {
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
                if publishing { publish(.account(event, at: clock())) }
            case .order(let shard, let event):
                guard state.shards.indices.contains(shard) else {
                    throw JournalEntryError(message: "journal record \(record.sequence) names board shard \(shard), "
                                            + "but this server has \(state.shards.count); start with the --shards-per-type it was written with")
                }
                let applied = state.shards[shard].apply(event)
                if publishing { publish(.order(applied)) }
            }
        }
    }

    /// Hands recovered state to the owners. Only while no owner runs: in `init`, or with every
    /// owner suspended (Durability.swift).
    func install(_ state: OwnedState) {
        accounts.store = state.accounts
        for (executor, shard) in zip(shards, state.shards) { executor.shard = shard }
    }

    // MARK: Commit

    /// The single commit point. Call on the owner's queue right after applying `entry`'s event;
    /// `onDurable` runs on `commitQueue` once the record is durable (reply there), and
    /// the change is pushed to everyone concerned right after it. If the record cannot be stored,
    /// `onDurable` gets `storage_unavailable` and the owners' memory is rebuilt from disk
    /// (`recoverFromStorageFailure`), because the change is already applied there.
    ///
    /// `afterPublish`, if given, runs on `commitQueue` once the change's pushes are
    /// enqueued: a block it hands to a loop runs after those pushes on that loop.
    func commit(_ entry: JournalEntry, applied: AppliedChange,
                onDurable: @escaping @Sendable (Result<Void, DomainError>) -> Void,
                afterPublish: (@Sendable () -> Void)? = nil) {
        let bytes = entry.encoded()
        commits.withLock { $0.inFlight += 1 }
        journal.append(bytes) { [self] result in
            switch result {
            case .success:
                onDurable(.success(()))
                publish(applied)
                afterPublish?()
            case .failure(let error):
                // The rebuild is scheduled before anyone hears of the failure.
                noteStorageFailure(error)
                onDurable(.failure(DomainError(.storageUnavailable,
                    "the server could not store this change (\(error.shortDescription)); nothing was changed, try again later")))
            }
            // Last, so a snapshot's cut that waits for no commit in flight also sees this
            // change's pushes in the personal streams and board numbering.
            commits.withLock { $0.inFlight -= 1 }
        }
    }

    // MARK: Publish

    /// Tells everyone concerned about a durable change: personal streams of the parties, and the
    /// board feed. Runs on `commitQueue` (live) or during replay (no one is connected).
    func publish(_ change: AppliedChange) {
        let recovering = isRecovering.withLock { $0 }
        switch change {
        case .account(let event, let at):
            // Updated here, before the user is told, so an approved runner's next accept sees it.
            if case .verificationDecided(let decision) = event {
                approvedRunners.withLock { runners in
                    if decision.isApproved { runners.insert(decision.user) } else { runners.remove(decision.user) }
                }
            }
            guard let (name, data) = AccountNotifications.describe(event) else { return }
            let encoded = JSONWriter.encode(data)
            for user in event.recipients {
                appendPersonal(for: user, name: name, data: encoded, at: at, deliver: !recovering)
            }
        case .order(let applied, let actorView):
            let order = applied.after
            let change = OrderNotifications.changeName(applied.event.change)
            for user in applied.event.notify {
                let view: [UInt8]
                if let actorView, actorView.viewer == user {
                    view = actorView.json
                } else {
                    view = OrderWire.encoded(OrderView(order, viewer: user))
                }
                appendPersonal(for: user, name: "order.changed", data: OrderWire.changedData(change: change, encodedView: view),
                               at: applied.event.at, deliver: !recovering)
            }
            let type = order.details.type
            let sequence = boardSequences.withLock { table -> UInt64 in
                table[type, default: 0] += 1
                return table[type]!
            }
            guard !recovering, !feedWatchers.isZero else { return }
            let broadcast = FeedBroadcast(change: applied, boardSequence: sequence)
            for registry in registries { registry.enqueueFeed(broadcast) }
        }
    }

    /// `data` is the event's JSON data, encoded.
    private func appendPersonal(for user: UserID, name: String, data: [UInt8], at: Timestamp, deliver: Bool) {
        streams.append(for: user, at: at, makeMessage: { sequence in
            EventMessage.personal(name: name, sequence: sequence, encodedData: data)
        }, deliver: { sequence, bytes in
            guard deliver else { return }
            let message = SharedMessage(text: bytes)
            for registry in registries {
                // On the registry's own loop (one loop: commits run there) it goes out with the
                // reply in the same write; other loops get it in order through their queue.
                if registry.loop.isCurrent {
                    registry.deliverPersonal(to: user, sequence: sequence, message: message)
                } else {
                    registry.loop.execute { registry.deliverPersonal(to: user, sequence: sequence, message: message) }
                }
            }
        })
    }

    func boardSequence(of type: OrderType) -> UInt64 { boardSequences.withLock { $0[type] ?? 0 } }

    // MARK: Runners

    func refreshApprovedRunners() {
        let store = accounts.store
        let approved = Set(store.state.accounts.keys.filter { store.canRunErrands($0) })
        approvedRunners.withLock { $0 = approved }
    }

    func isApprovedRunner(_ user: UserID) -> Bool { approvedRunners.withLock { $0.contains(user) } }

    // MARK: Timers

    /// Applies every time-driven transition due on this shard and re-arms its timer.
    /// Runs on the shard's queue.
    func applyDueTransitions(_ executor: ShardExecutor) {
        let now = clock()
        for event in executor.shard.dueTransitions(now: now) {
            let applied = executor.shard.apply(event)
            commit(.order(shard: executor.shard.index, event), applied: .order(applied)) { _ in }
        }
        armTimer(executor)
    }

    /// Makes sure the shard's timer fires at its next due time. Runs on the shard's queue.
    func armTimer(_ executor: ShardExecutor) {
        guard let due = executor.shard.nextDueTime else {
            executor.timer?.cancel()
            executor.timer = nil
            executor.timerDueAt = nil
            return
        }
        if let armed = executor.timerDueAt, armed <= due, executor.timer != nil { return }
        executor.timer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: executor.queue)
        let delay = max(0, due.rawValue - clock().rawValue)
        timer.schedule(deadline: .now() + .milliseconds(Int(min(delay, 86_400_000))))
        timer.setEventHandler { [self] in
            executor.timer = nil
            executor.timerDueAt = nil
            applyDueTransitions(executor)
        }
        executor.timer = timer
        executor.timerDueAt = due
        timer.resume()
    }

    private func scheduleSessionPurge() {
        accounts.queue.asyncAfter(deadline: .now() + .seconds(3600)) { [self] in
            if let event = accounts.store.decideSessionPurge(now: clock()) {
                accounts.store.apply(event)
                commit(.account(event), applied: .account(event, at: clock())) { _ in }
            }
            scheduleSessionPurge()
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
