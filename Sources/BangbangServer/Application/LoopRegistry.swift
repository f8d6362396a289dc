// Who is connected, per event loop: the logged-in sessions by user (for personal events) and
// the sessions watching boards (for the feed). Each loop has its own registry, touched only on
// that loop's queue, so fan-out needs no locks: the publisher hands each loop one block, and
// the loop walks its own sessions and writes the shared frames.
import BangbangCore
import BangbangProtocol
import SocketServer
import Synchronization

/// Confined to `loop.queue`.
final class LoopRegistry: @unchecked Sendable {
    let loop: EventLoop
    private var sessionsByUser: [UserID: [ClientSession]] = [:]
    private var watchers: [ObjectIdentifier: ClientSession] = [:]
    /// Board changes waiting for this loop's next drain, and whether one is scheduled. Filled from
    /// the commit queue, emptied on the loop: the only state here shared across threads.
    private let pendingFeed = Mutex<(broadcasts: [FeedBroadcast], isDrainScheduled: Bool)>(([], false))

    private let metrics: ServerMetrics
    private let watcherTotal: WatcherTotal

    init(loop: EventLoop, metrics: ServerMetrics, watcherTotal: WatcherTotal) {
        self.loop = loop
        self.metrics = metrics
        self.watcherTotal = watcherTotal
    }

    func register(_ session: ClientSession, as user: UserID) {
        sessionsByUser[user, default: []].append(session)
    }

    func unregister(_ session: ClientSession, as user: UserID) {
        sessionsByUser[user]?.removeAll { $0 === session }
        if sessionsByUser[user]?.isEmpty == true { sessionsByUser[user] = nil }
    }

    func sessions(of user: UserID) -> [ClientSession] { sessionsByUser[user] ?? [] }

    /// Users with a logged-in session on this loop.
    var connectedUsers: Set<UserID> { Set(sessionsByUser.keys) }

    func startWatching(_ session: ClientSession) {
        if watchers.updateValue(session, forKey: ObjectIdentifier(session)) == nil {
            watcherTotal.count.add(1, ordering: .sequentiallyConsistent)
        }
    }

    func stopWatching(_ session: ClientSession) {
        if watchers.removeValue(forKey: ObjectIdentifier(session)) != nil {
            watcherTotal.count.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Verified runners on this loop watching `type` now, counted once per user.
    func runnersWatching(_ type: OrderType, isRunner: (UserID) -> Bool) -> Set<UserID> {
        var users: Set<UserID> = []
        for session in watchers.values {
            guard let user = session.user, let filter = session.feedFilter, filter.types.contains(type),
                  isRunner(user) else { continue }
            users.insert(user)
        }
        return users
    }

    func deliverPersonal(to user: UserID, sequence: UInt64, message: SharedMessage) {
        for session in sessionsByUser[user] ?? [] { session.deliverPersonal(sequence: sequence, message: message) }
    }

    /// Queues a board change for this loop's watchers (any thread). Changes that arrive while a
    /// drain is pending join it, so under load one loop turn writes many messages to each
    /// watcher with one `writev` instead of one write per message per watcher.
    func enqueueFeed(_ broadcast: FeedBroadcast) {
        let needsDrain = pendingFeed.withLock { pending -> Bool in
            pending.broadcasts.append(broadcast)
            guard !pending.isDrainScheduled else { return false }
            pending.isDrainScheduled = true
            return true
        }
        if needsDrain { loop.execute { self.drainFeed() } }
    }

    /// Sends every pending board change to every watcher it concerns. Runs on the loop.
    func drainFeed() {
        let batch = pendingFeed.withLock { pending -> [FeedBroadcast] in
            pending.isDrainScheduled = false
            defer { pending.broadcasts.removeAll(keepingCapacity: true) }
            return pending.broadcasts
        }
        guard !batch.isEmpty else { return }
        var delivered = 0
        for session in watchers.values { delivered += session.deliverFeed(batch) }
        metrics.pushesSent.add(delivered)
    }
}

/// Sessions watching a board, over every loop. A change published while it is zero needs no
/// feed message: a session that starts watching afterwards lists the board after registering,
/// and the list already holds the change (it was applied before it was published).
final class WatcherTotal: Sendable {
    let count = Atomic<Int>(0)

    var isZero: Bool { count.load(ordering: .sequentiallyConsistent) == 0 }
}

/// One board change, ready to be sent to any watcher: the feed messages it can cause are encoded
/// once, when it is made, and shared by every recipient on every loop (no lock on the fan-out
/// path). Only an order still on the board can enter or update a watcher's view; any change can
/// make it leave one (a filter it no longer matches), and that message is tiny.
final class FeedBroadcast: Sendable {
    let change: AppliedOrderChange
    let boardSequence: UInt64
    private let enter: SharedMessage?
    private let update: SharedMessage?
    private let leave: SharedMessage

    init(change: AppliedOrderChange, boardSequence: UInt64) {
        self.change = change
        self.boardSequence = boardSequence
        let order = change.after
        let type = order.details.type.rawValue
        func message(_ kind: FeedChange, _ data: [UInt8]) -> SharedMessage {
            SharedMessage(text: EventMessage.board(name: "feed.\(kind.rawValue)", type: type, sequence: boardSequence,
                                                   encodedData: data))
        }
        if order.isListed {
            let data = OrderWire.orderData(OrderView(order, viewer: nil))
            enter = message(.enter, data)
            update = message(.update, data)
        } else {
            enter = nil
            update = nil
        }
        leave = message(.leave, JSONWriter.encode(["order_id": .integer(Int64(order.id.rawValue)),
                                                   "status": .string(order.status.rawValue)]))
    }

    func message(for kind: FeedChange) -> SharedMessage {
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
