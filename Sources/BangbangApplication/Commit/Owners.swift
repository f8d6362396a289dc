// The owners: the accounts store and each board shard, every one confined to its own serial
// queue. An owner is the only place its state changes, and every durable change goes through its
// `commit`, which does the four things a change needs, always in this order:
//   1. apply the decided event to the owner's value;
//   2. re-arm the owner's timer (a shard's next deadline may have moved);
//   3. encode what each recipient will be told (their own view of the order, the board feed's
//      messages), here on the owner's queue, so the single publishing queue only numbers and
//      hands out bytes;
//   4. append the event to the journal (`CommitLog`); replies and pushes wait for it to be durable.
// Operations only decide (a pure function of the owner's value) and reply; they never apply,
// journal or arm timers themselves.
import BangbangCore
import BangbangProtocol
import Dispatch
import WebSocketServer

/// Owns the `AccountStore`. Confined to `queue`: `store` may be touched only there.
package final class AccountsOwner: @unchecked Sendable {
    /// Expired sessions are purged this often; a purge is one journal record.
    static let sessionPurgeInterval: DispatchTimeInterval = .seconds(3600)

    let queue: DispatchQueue
    package var store: AccountStore
    private let log: CommitLog
    private let clock: @Sendable () -> Timestamp

    /// `target`: see `Application.init`'s `ownersTarget`.
    init(store: AccountStore, log: CommitLog, clock: @escaping @Sendable () -> Timestamp, target: DispatchQueue? = nil) {
        self.store = store
        self.log = log
        self.clock = clock
        self.queue = DispatchQueue(label: "bangbang.accounts", qos: .userInitiated, target: target)
    }

    package func perform(_ body: @escaping @Sendable (AccountsOwner) -> Void) {
        queue.async { body(self) }
    }

    /// Applies `event`, encodes its personal event and journals it. `read` runs right after the
    /// apply (so a reply can show the change, reading the store only here, on its queue); its
    /// value reaches `onDurable`, which runs on the publishing queue once the record is durable
    /// (or could not be stored), before the change is pushed. `afterPublish` runs once the
    /// change's personal events are numbered and their pushes queued (with `read`'s value too),
    /// so whatever it posts to a loop's outbox arrives behind them. Runs on `queue`.
    package func commit<Reply: Sendable>(_ event: AccountEvent, at now: Timestamp, reading read: (AccountStore) -> Reply,
                                 onDurable: @escaping @Sendable (Result<Reply, DomainError>) -> Void,
                                 afterPublish: (@Sendable (Reply) -> Void)? = nil) {
        dispatchPrecondition(condition: .onQueue(queue))
        store.apply(event)
        let reply = read(store)
        var announced: (@Sendable () -> Void)?
        if let afterPublish { announced = { afterPublish(reply) } }
        log.append(.account(event), announcing: Announcement(event, at: now),
                   onDurable: { result in onDurable(result.map { reply }) }, afterPublish: announced)
    }

    /// `commit` for a change nobody waits to hear about (a purge, an offline tool's change).
    package func commit(_ event: AccountEvent, at now: Timestamp,
                onDurable: @escaping @Sendable (Result<Void, DomainError>) -> Void = { _ in },
                afterPublish: (@Sendable () -> Void)? = nil) {
        var announced: (@Sendable (()) -> Void)?
        if let afterPublish { announced = { _ in afterPublish() } }
        commit(event, at: now, reading: { _ in () }, onDurable: onDurable, afterPublish: announced)
    }

    /// Purges expired sessions every `sessionPurgeInterval`, for the life of the process.
    func startSessionPurge() {
        queue.asyncAfter(deadline: .now() + Self.sessionPurgeInterval) { [self] in
            let now = clock()
            if let event = store.decideSessionPurge(now: now) { commit(event, at: now) }
            startSessionPurge()
        }
    }
}

/// Owns one `BoardShard`, its due-transition timer and what it knows the archive holds.
/// Confined to `queue`: `shard`, the timer and `archivedRevisions` may be touched only there.
package final class ShardOwner: @unchecked Sendable {
    /// Orders moved to the archive per sweep, at most; a sweep that reaches it goes on shortly,
    /// so a large backlog (a data directory from before the archive) never holds the queue long.
    static let movesPerSweep = 1_000
    let queue: DispatchQueue
    let type: OrderType
    var shard: BoardShard
    private let log: CommitLog
    private let clock: @Sendable () -> Timestamp
    /// The due-transition timer currently armed, and for when.
    private var timer: DispatchSourceTimer?
    private var timerDueAt: Timestamp?
    /// The revision the archive holds of each closed order still in memory (Archiver.swift).
    private(set) var archivedRevisions: [OrderID: Int] = [:]

    /// `target`: see `Application.init`'s `ownersTarget`.
    init(shard: BoardShard, type: OrderType, log: CommitLog, clock: @escaping @Sendable () -> Timestamp,
         target: DispatchQueue? = nil) {
        self.shard = shard
        self.type = type
        self.log = log
        self.clock = clock
        self.queue = DispatchQueue(label: "bangbang.shard.\(shard.index)", qos: .userInitiated, target: target)
    }

    package func perform(_ body: @escaping @Sendable (ShardOwner) -> Void) {
        queue.async { body(self) }
    }

    /// A durable order change, and the order as the actor now sees it, encoded once for the
    /// reply and for the actor's own push (nil without an actor).
    package struct Committed: Sendable {
        let change: AppliedOrderChange
        let actorView: [UInt8]?
    }

    /// Applies `event`, re-arms the timer, encodes every party's view and the feed's messages,
    /// and journals it. `onDurable` runs on the publishing queue once the record is durable (or
    /// could not be stored). Runs on `queue`.
    @discardableResult
    package func commit(_ event: OrderEvent, for actor: UserID? = nil,
                onDurable: @escaping @Sendable (Result<Committed, DomainError>) -> Void = { _ in }) -> AppliedOrderChange {
        dispatchPrecondition(condition: .onQueue(queue))
        let applied = shard.apply(event)
        armTimer()
        let actorView = actor.map { EncodedOrderView(viewer: $0, json: OrderWire.encoded(OrderView(applied.after, viewer: $0))) }
        let announcement = Announcement(applied, actorView: actorView, includingFeed: !log.publisher.boards.feedWatchers.isZero)
        var closing: Order?
        if applied.after.status.isTerminal, event.change != .movedToArchive { closing = applied.after }
        log.append(.order(shard: shard.index, event), closing: closing, announcing: announcement, onDurable: { result in
            onDurable(result.map { Committed(change: applied, actorView: actorView?.json) })
        })
        return applied
    }

    /// Commits every time-driven transition due now and re-arms the timer. Runs on `queue`.
    func applyDueTransitions() {
        for event in shard.dueTransitions(now: clock()) { commit(event) }
        armTimer()
    }

    // MARK: Leaving for the archive

    /// The archive now holds these orders at these revisions. Runs on `queue`.
    func noteArchived(_ stored: [(id: OrderID, revision: Int)]) {
        dispatchPrecondition(condition: .onQueue(queue))
        for (id, revision) in stored where shard.order(id) != nil {
            archivedRevisions[id] = max(archivedRevisions[id] ?? 0, revision)
        }
    }

    /// Journals a move to the archive for each order the archive holds at its current revision
    /// whose rating window has passed, up to `movesPerSweep`; returns how many. An entry whose
    /// order has left (or whose move failed to be stored and was rolled back: it stays) is
    /// dropped at the next sweep. Runs on `queue`.
    @discardableResult
    func moveArchivedOrders(rules: OrderRules) -> Int {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = clock()
        var moved = 0
        var gone: [OrderID] = []
        for (id, revision) in archivedRevisions {
            guard moved < Self.movesPerSweep else { break }
            guard shard.order(id) != nil else {
                gone.append(id)
                continue
            }
            guard let event = shard.decideMoveToArchive(id, archivedRevision: revision, now: now, rules: rules) else { continue }
            commit(event)
            moved += 1
        }
        for id in gone { archivedRevisions[id] = nil }
        return moved
    }

    /// Sweeps every `interval` (sooner while a backlog remains), for the life of the owner,
    /// adding the orders moved to `counter`.
    func startArchiveSweeps(every interval: DispatchTimeInterval, rules: OrderRules, counting counter: Counter) {
        queue.asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self else { return }
            let moved = moveArchivedOrders(rules: rules)
            counter.add(moved)
            startArchiveSweeps(every: moved >= Self.movesPerSweep ? .milliseconds(10) : interval, rules: rules,
                               counting: counter)
        }
    }

    /// Makes sure the timer fires at the shard's next due time. Runs on `queue`.
    private func armTimer() {
        guard let due = shard.nextDueTime else {
            timer?.cancel()
            timer = nil
            timerDueAt = nil
            return
        }
        if let armed = timerDueAt, armed <= due, timer != nil { return }
        timer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let delay = max(0, due.rawValue - clock().rawValue)
        timer.schedule(deadline: .now() + .milliseconds(Int(min(delay, 86_400_000))))
        timer.setEventHandler { [self] in
            self.timer = nil
            timerDueAt = nil
            applyDueTransitions()
        }
        self.timer = timer
        timerDueAt = due
        timer.resume()
    }
}
