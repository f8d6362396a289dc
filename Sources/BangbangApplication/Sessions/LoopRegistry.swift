// Who is connected, per event loop, and the loop's outbox. The registry knows the logged-in
// sessions by user (for personal events) and the sessions watching boards (for the feed); it is
// touched only on its loop's queue, so fan-out needs no locks. Everything other queues have for
// this loop's connections -- replies from the owners, personal events, board changes, work that
// must follow them -- is posted to the outbox, in order, and the loop drains it once per turn:
// many messages to one connection then leave in one gathered write, and a reply always precedes the
// pushes of the change it answers. The publisher posts only to loops that hold a connection of
// the user concerned (`Presence`) or a watcher of the boards.
import BangbangCore
import BangbangProtocol
import SocketServer
import Synchronization
import WebSocketServer

/// What other queues hand to a loop for its connections.
package enum OutboxItem: Sendable {
    case personal(UserID, sequence: UInt64, SharedMessage)
    case feed(FeedBroadcast)
    case reply(OperationContext, Result<OperationContext.ReplyData, DomainError>)
    /// Work for this loop that must run after what was posted before it.
    case run(@Sendable () -> Void)
}

/// Confined to `loop.queue`, except `post` and `hasWatchers` (any thread).
package final class LoopRegistry: @unchecked Sendable {
    package let loop: EventLoop
    private var sessionsByUser: [UserID: UserSessions] = [:]
    /// The sessions watching the boards, by filter.
    private var watcherGroups: [FeedFilter: WatcherGroup] = [:]
    /// Sessions watching, readable by the publisher.
    private let watcherCount = Atomic<Int>(0)
    /// Items waiting for this loop's next drain, and whether one is scheduled: the only state
    /// here written from other threads.
    private let outbox = Mutex<(items: [OutboxItem], isDrainScheduled: Bool)>(([], false))
    /// The drained batch and the feed changes gathered from it, kept for their capacity up to
    /// `retainedBatchCapacity`: a burst (thousands of logins at once) does not leave the loop
    /// holding room for thousands of items while it is idle.
    private var draining: [OutboxItem] = []
    private var feedBatch: [FeedBroadcast] = []
    static let retainedBatchCapacity = 256

    private let metrics: ServerMetrics
    private let watcherTotal: WatcherTotal
    private let presence: Presence

    package init(loop: EventLoop, metrics: ServerMetrics, watcherTotal: WatcherTotal, presence: Presence) {
        self.loop = loop
        self.metrics = metrics
        self.watcherTotal = watcherTotal
        self.presence = presence
    }

    func register(_ session: ClientSession, as user: UserID) {
        if sessionsByUser[user] == nil { presence.add(user, onLoop: loop.index) }
        sessionsByUser[user] = (sessionsByUser[user] ?? .none).adding(session)
    }

    func unregister(_ session: ClientSession, as user: UserID) {
        guard let sessions = sessionsByUser[user] else { return }
        let remaining = sessions.removing(session)
        if remaining.isEmpty {
            sessionsByUser[user] = nil
            presence.remove(user, fromLoop: loop.index)
        } else {
            sessionsByUser[user] = remaining
        }
    }

    package func sessions(of user: UserID) -> UserSessions { sessionsByUser[user] ?? .none }

    /// Users with a logged-in session on this loop.
    var connectedUsers: Set<UserID> { Set(sessionsByUser.keys) }

    /// Whether a session on this loop watches a board. Any thread.
    var hasWatchers: Bool { watcherCount.load(ordering: .relaxed) > 0 }

    /// Starts (or, with a new filter, moves) `session`'s watch of the boards.
    func startWatching(_ session: ClientSession, with filter: FeedFilter) {
        guard session.channel != nil else { return }
        if let current = session.watchedGroup {
            if current.filter == filter { return }
            leave(current, session)
        } else {
            watcherCount.add(1, ordering: .relaxed)
            watcherTotal.count.add(1, ordering: .sequentiallyConsistent)
        }
        let group = watcherGroups[filter] ?? {
            let made = WatcherGroup(filter: filter)
            watcherGroups[filter] = made
            return made
        }()
        session.watchedGroup = group
        session.watcherSlot = group.members.count
        group.members.append(session)
    }

    func stopWatching(_ session: ClientSession) {
        guard let group = session.watchedGroup else { return }
        leave(group, session)
        watcherCount.subtract(1, ordering: .relaxed)
        watcherTotal.count.subtract(1, ordering: .sequentiallyConsistent)
    }

    private func leave(_ group: WatcherGroup, _ session: ClientSession) {
        let slot = session.watcherSlot
        guard slot < group.members.count, group.members[slot] === session else {
            fatalError("internal inconsistency in LoopRegistry: a watcher is not in its group")
        }
        let last = group.members.removeLast()
        if slot < group.members.count {
            group.members[slot] = last
            last.watcherSlot = slot
        }
        session.watchedGroup = nil
        if group.members.isEmpty { watcherGroups[group.filter] = nil }
    }

    /// Distinct filters watched on this loop (for tests: watchers with one filter share a group).
    var watcherGroupCount: Int { watcherGroups.count }

    /// Verified runners on this loop watching `type` now, counted once per user.
    func runnersWatching(_ type: OrderType, isRunner: (UserID) -> Bool) -> Set<UserID> {
        var users: Set<UserID> = []
        for (filter, group) in watcherGroups where filter.types.contains(type) {
            for member in group.members {
                guard let user = member.user, isRunner(user) else { continue }
                users.insert(user)
            }
        }
        return users
    }

    // MARK: The outbox

    /// Queues `item` for this loop's next drain (any thread). Items that arrive while a drain is
    /// pending join it.
    func post(_ item: OutboxItem) {
        let needsDrain = outbox.withLock { pending -> Bool in
            pending.items.append(item)
            guard !pending.isDrainScheduled else { return false }
            pending.isDrainScheduled = true
            return true
        }
        if needsDrain { loop.execute { self.drain() } }
    }

    /// Runs `work` on this loop after everything posted so far (any thread).
    func post(_ work: @escaping @Sendable () -> Void) { post(.run(work)) }

    /// Delivers every pending item in order, as each connection sees it. Board changes are
    /// gathered and sent to the watchers as one batch, in one write each; an item for a
    /// connection that is not watching (a publisher's reply) is delivered without ending the
    /// batch, since nothing orders it against other connections' feed. Runs on the loop.
    private func drain() {
        outbox.withLock { pending in
            pending.isDrainScheduled = false
            swap(&pending.items, &draining)
        }
        // Taken out one by one from the end, after reversing (which only moves them): iterating
        // would copy each item, retaining everything it holds, and then destroy the copies.
        draining.reverse()
        while let item = draining.popLast() {
            switch item {
            case .feed(let broadcast):
                feedBatch.append(broadcast)
                continue
            case .personal(let user, let sequence, let message):
                let sessions = sessionsByUser[user] ?? .none
                if sessions.contains(where: { $0.watchedGroup != nil }) { deliverFeedBatch() }
                for session in sessions { session.deliverPersonal(sequence: sequence, message: message) }
            case .reply(let context, let result):
                if context.session.watchedGroup != nil { deliverFeedBatch() }
                context.session.finish(context, with: result)
            case .run(let work):
                deliverFeedBatch()
                work()
            }
        }
        deliverFeedBatch()
        draining.removeAll(keepingCapacity: draining.capacity <= Self.retainedBatchCapacity)
    }

    /// Sends each group of watchers the messages this batch of board changes causes for its
    /// filter, chosen and framed once per group and written to each member in one gathered write.
    private func deliverFeedBatch() {
        guard !feedBatch.isEmpty else { return }
        var delivered = 0
        for group in watcherGroups.values {
            var messages: [SharedMessage] = []
            for broadcast in feedBatch {
                guard let kind = group.filter.change(before: broadcast.before, after: broadcast.after) else { continue }
                messages.append(broadcast.message(for: kind))
            }
            guard !messages.isEmpty else { continue }
            let batch = SharedBatch(messages)
            for member in group.members where member.channel?.send(shared: batch) == true {
                delivered += messages.count
            }
        }
        metrics.pushesSent.add(delivered)
        feedBatch.removeAll(keepingCapacity: feedBatch.capacity <= Self.retainedBatchCapacity)
    }
}

/// The logged-in sessions of one user on one loop, oldest first. Nearly every user has one, so
/// the registry's table holds that session itself, or else an array of them: one reference either
/// way, told apart by the pointer's spare bits, so 8 bytes a user with no array of one.
package enum UserSessions: RandomAccessCollection {
    case none
    case one(ClientSession)
    /// Two or more.
    case many([ClientSession])

    package var startIndex: Int { 0 }

    package var endIndex: Int {
        switch self {
        case .none: 0
        case .one: 1
        case .many(let sessions): sessions.count
        }
    }

    package subscript(position: Int) -> ClientSession {
        switch self {
        case .one(let session) where position == 0: session
        case .many(let sessions): sessions[position]
        default: preconditionFailure("UserSessions index out of range")
        }
    }

    func adding(_ session: ClientSession) -> UserSessions {
        switch self {
        case .none: .one(session)
        case .one(let first): .many([first, session])
        case .many(let sessions): .many(sessions + [session])
        }
    }

    func removing(_ session: ClientSession) -> UserSessions {
        let remaining = filter { $0 !== session }
        switch remaining.count {
        case 0: return .none
        case 1: return .one(remaining[0])
        default: return .many(remaining)
        }
    }
}

/// The sessions of one loop watching the boards with one filter, so that what a board change
/// shows them is decided and framed once for all of them. Confined to the loop, like its registry.
package final class WatcherGroup {
    let filter: FeedFilter
    /// In no particular order; each session knows its slot (`ClientSession.watcherSlot`). A
    /// session, not its channel: the channel is an existential (two words), and a session leaves
    /// its group when its channel closes.
    var members: [ClientSession] = []

    init(filter: FeedFilter) {
        self.filter = filter
    }
}

/// Sessions watching a board, over every loop. A change published while it is zero needs no
/// feed message: a session that starts watching afterwards lists the board after registering,
/// and the list already holds the change (it was applied before it was published).
package final class WatcherTotal: Sendable {
    package let count = Atomic<Int>(0)

    var isZero: Bool { count.load(ordering: .sequentiallyConsistent) == 0 }
}

/// One board change, ready to be sent to any watcher: the feed messages it can cause are framed
/// once, when it is numbered, and shared by every recipient on every loop (no lock on the fan-out
/// path). Only an order still on the board can enter or update a watcher's view; any change can
/// make it leave one (a filter it no longer matches), and that message is tiny.
package final class FeedBroadcast: Sendable {
    /// The order before and after the change: what each watcher group's filter decides on.
    package let before: Order?
    package let after: Order
    package let boardSequence: UInt64
    private let enter: SharedMessage?
    private let update: SharedMessage?
    private let leave: SharedMessage

    /// The feed's event data for one order, encoded once on its owner's queue.
    package struct Data: Sendable {
        /// The order as a watcher sees it; nil once it is off the board.
        let listed: [UInt8]?
        let leave: [UInt8]

        package init(_ order: Order) {
            listed = order.isListed ? OrderWire.orderData(OrderView(order, viewer: nil)) : nil
            leave = JSONWriter.encode(["order_id": .integer(Int64(order.id.rawValue)),
                                       "status": .string(order.status.rawValue)])
        }
    }

    package init(before: Order?, after: Order, boardSequence: UInt64, data: Data) {
        self.before = before
        self.after = after
        self.boardSequence = boardSequence
        let type = after.details.type.rawValue
        func message(_ kind: FeedChange, _ data: [UInt8]) -> SharedMessage {
            SharedMessage(text: EventMessage.board(name: "feed.\(kind.rawValue)", type: type, sequence: boardSequence,
                                                   encodedData: data))
        }
        enter = data.listed.map { message(.enter, $0) }
        update = data.listed.map { message(.update, $0) }
        leave = message(.leave, data.leave)
    }

    package func message(for kind: FeedChange) -> SharedMessage {
        let message: SharedMessage?
        switch kind {
        case .enter: message = enter
        case .update: message = update
        case .leave: return leave
        }
        guard let message else {
            fatalError("internal inconsistency in FeedBroadcast: a \(kind) for an order whose board state cannot cause it")
        }
        return message
    }
}
