// Who is connected, per event loop: the logged-in sessions by user (for personal events) and
// the sessions watching boards (for the feed). Each loop has its own registry, touched only on
// that loop's queue, so fan-out needs no locks: the publisher hands each loop one block, and
// the loop walks its own sessions and writes the shared frames.
import BangbangCore
import BangbangProtocol
import SocketServer

/// Confined to `loop.queue`.
final class LoopRegistry: @unchecked Sendable {
    let loop: EventLoop
    private var sessionsByUser: [UserID: [ClientSession]] = [:]
    private var watchers: [ObjectIdentifier: ClientSession] = [:]

    init(loop: EventLoop) { self.loop = loop }

    func register(_ session: ClientSession, as user: UserID) {
        sessionsByUser[user, default: []].append(session)
    }

    func unregister(_ session: ClientSession, as user: UserID) {
        sessionsByUser[user]?.removeAll { $0 === session }
        if sessionsByUser[user]?.isEmpty == true { sessionsByUser[user] = nil }
    }

    func sessions(of user: UserID) -> [ClientSession] { sessionsByUser[user] ?? [] }

    func startWatching(_ session: ClientSession) { watchers[ObjectIdentifier(session)] = session }
    func stopWatching(_ session: ClientSession) { watchers[ObjectIdentifier(session)] = nil }

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

    func deliverFeed(_ broadcast: FeedBroadcast) {
        for session in watchers.values { session.deliverFeed(broadcast) }
    }

    func forEachSession(_ body: (ClientSession) -> Void) {
        for sessions in sessionsByUser.values { sessions.forEach(body) }
        for session in watchers.values where session.user == nil { body(session) }
    }
}

/// One board change, ready to be sent to any watcher: the three possible feed messages are
/// encoded at most once each, whoever asks first, and shared by every recipient.
final class FeedBroadcast: Sendable {
    let change: AppliedOrderChange
    let boardSequence: UInt64
    private let messages = Mutex<[FeedChange: SharedMessage]>([:])

    init(change: AppliedOrderChange, boardSequence: UInt64) {
        self.change = change
        self.boardSequence = boardSequence
    }

    func message(for kind: FeedChange) -> SharedMessage {
        messages.withLock { cache in
            if let message = cache[kind] { return message }
            let data: JSONValue
            switch kind {
            case .enter, .update:
                data = ["order": OrderWire.encode(OrderView(change.after, viewer: nil))]
            case .leave:
                data = ["order_id": .integer(Int64(change.after.id.rawValue)),
                        "status": .string(change.after.status.rawValue)]
            }
            let bytes = EventMessage.board(name: "feed.\(kind.rawValue)", type: change.after.details.type.rawValue,
                                           sequence: boardSequence, data: data)
            let message = SharedMessage(text: bytes)
            cache[kind] = message
            return message
        }
    }
}
