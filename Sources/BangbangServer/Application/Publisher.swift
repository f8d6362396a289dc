// The publisher: the one thing a durable change still needs a single global order for. It runs on
// the journal's completion queue (serial, in sequence order) and does only what needs that order:
// number each recipient's personal event and the board's feed event, and hand the bytes, already
// encoded by the owner (Owners.swift), to the outbox of each event loop that holds a connection
// of that user (or a watcher of the board). Each loop drains its outbox once per turn
// (LoopRegistry.swift). Recovery replays the journal through `publish` too, so the numbering
// after a restart is the numbering that was given live.
import BangbangCore
import BangbangProtocol
import Dispatch
import Synchronization
import WebSocketServer

/// One viewer's view of an order, encoded (`OrderWire.encoded`).
struct EncodedOrderView: Sendable {
    let viewer: UserID
    let json: [UInt8]
}

/// What one durable change tells people, encoded on its owner's queue; only the sequence numbers
/// are missing.
struct Announcement: Sendable {
    struct PersonalEvent: Sendable {
        /// The event's `data`: encoded, or the parts of an order change's, which are written
        /// straight into the message once the event has its number.
        enum Payload: Sendable {
            case encoded([UInt8])
            case orderChanged(change: String, encodedView: [UInt8])
        }

        let user: UserID
        let name: String
        let payload: Payload
    }

    /// A change to an order: the board's numbering moves, and watchers may be told.
    struct BoardChange: Sendable {
        let change: AppliedOrderChange
        /// The feed's `data` when the order is still listed, and when it leaves a view; nil when
        /// nobody watched any board as the owner encoded it (the publisher encodes them if
        /// someone started since).
        let feedData: FeedBroadcast.Data?
    }

    let at: Timestamp
    var personal: [PersonalEvent] = []
    var board: BoardChange?
    /// A runner verification decided: who, and whether they may now accept orders.
    var runnerDecision: (user: UserID, isApproved: Bool)?

    init(_ event: AccountEvent, at now: Timestamp) {
        at = now
        if case .verificationDecided(let decision) = event {
            runnerDecision = (decision.user, decision.isApproved)
        }
        guard let (name, data) = AccountNotifications.describe(event) else { return }
        let encoded = JSONWriter.encode(data)
        personal = event.recipients.map { PersonalEvent(user: $0, name: name, payload: .encoded(encoded)) }
    }

    /// `actorView`, when given, is reused for its viewer's own event.
    /// A move to the archive tells nobody and leaves the board's numbering as it was (it is
    /// replayed through here too, so live and recovered numbering agree).
    init(_ applied: AppliedOrderChange, actorView: EncodedOrderView?, includingFeed: Bool) {
        at = applied.event.at
        if case .movedToArchive = applied.event.change { return }
        let order = applied.after
        let change = OrderNotifications.changeName(applied.event.change)
        personal = applied.event.notify.map { user in
            let view = actorView?.viewer == user ? actorView!.json : OrderWire.encoded(OrderView(order, viewer: user))
            return PersonalEvent(user: user, name: "order.changed",
                                 payload: .orderChanged(change: change, encodedView: view))
        }
        board = BoardChange(change: applied, feedData: includingFeed ? FeedBroadcast.Data(order) : nil)
    }
}

/// Which loops hold a logged-in connection of each user: a bit per loop (at most 64, the
/// `--event-loops` limit). Written by the loops as sessions log in and out, read by the publisher.
/// There is an entry per connected user, and a server runs about a loop per core, so the bits
/// are kept in a byte per user until a loop numbered 8 or more adds a user, and in 64 bits from
/// then on.
final class Presence: Sendable {
    private enum Table {
        case narrow([UserID: UInt8])
        case wide([UserID: UInt64])
    }

    private let table = Mutex<Table>(.narrow([:]))

    func add(_ user: UserID, onLoop index: Int) {
        table.withLock { table in
            switch table {
            case .narrow(var loops) where index < UInt8.bitWidth:
                // Out of the enum first, so the dictionary is uniquely referenced and changes in place.
                table = .narrow([:])
                loops[user, default: 0] |= 1 << UInt8(index)
                table = .narrow(loops)
            case .narrow(let loops):
                var wide = loops.mapValues(UInt64.init)
                wide[user, default: 0] |= 1 << UInt64(index)
                table = .wide(wide)
            case .wide(var loops):
                table = .wide([:])
                loops[user, default: 0] |= 1 << UInt64(index)
                table = .wide(loops)
            }
        }
    }

    func remove(_ user: UserID, fromLoop index: Int) {
        table.withLock { table in
            switch table {
            case .narrow(var loops):
                guard index < UInt8.bitWidth, let bits = loops[user] else { return }
                table = .narrow([:])
                let remaining = bits & ~(1 << UInt8(index))
                loops[user] = remaining == 0 ? nil : remaining
                table = .narrow(loops)
            case .wide(var loops):
                guard let bits = loops[user] else { return }
                table = .wide([:])
                let remaining = bits & ~(1 << UInt64(index))
                loops[user] = remaining == 0 ? nil : remaining
                table = .wide(loops)
            }
        }
    }

    func loops(of user: UserID) -> UInt64 {
        table.withLock { table in
            switch table {
            case .narrow(let loops): UInt64(loops[user] ?? 0)
            case .wide(let loops): loops[user] ?? 0
            }
        }
    }
}

/// Confined to `queue` (`publish`), except for the locked tables it shares with the loops and
/// the snapshot's cut. `attach` runs once, before anything is published live.
final class Publisher: @unchecked Sendable {
    /// The journal's completion queue.
    let queue: DispatchQueue
    let streams: PersonalStreams
    let boardSequences = Mutex<[OrderType: UInt64]>([:])
    /// Approved runners, mirrored from the accounts store so accepts and counts need no hop.
    let approvedRunners = Mutex<Set<UserID>>([])
    let feedWatchers = WatcherTotal()
    let presence = Presence()
    /// The loops' registries, held weakly: they belong to the server (and hold the sessions,
    /// which hold the application), so the publisher does not keep them alive.
    private let loops = Mutex<(registries: [WeakRegistry], isLive: Bool)>(([], false))
    private let metrics: ServerMetrics

    init(queue: DispatchQueue, metrics: ServerMetrics, streams: PersonalStreams = PersonalStreams()) {
        self.queue = queue
        self.metrics = metrics
        self.streams = streams
    }

    /// Starts live delivery to `registries`, indexed by loop. Call once, before serving.
    func attach(to registries: [LoopRegistry]) {
        loops.withLock { $0 = (registries.map { WeakRegistry(registry: $0) }, true) }
    }

    /// The loops' registries, for what must visit every loop (statistics, logging a session out).
    var registries: [LoopRegistry] { loops.withLock { $0.registries.compactMap(\.registry) } }

    /// The registries of the loops that hold a logged-in connection of `user`.
    func registries(holding user: UserID) -> [LoopRegistry] {
        var bits = presence.loops(of: user)
        let registries = loops.withLock { $0.registries }
        var found: [LoopRegistry] = []
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            if index < registries.count, let registry = registries[index].registry { found.append(registry) }
        }
        return found
    }

    func boardSequence(of type: OrderType) -> UInt64 { boardSequences.withLock { $0[type] ?? 0 } }

    /// Numbers a durable change's events and hands them to the loops. Runs on `queue` (live) or
    /// during replay (no one is connected).
    func publish(_ announcement: Announcement) {
        if let decision = announcement.runnerDecision {
            // Updated here, before the user is told, so an approved runner's next accept sees it.
            approvedRunners.withLock { runners in
                if decision.isApproved { runners.insert(decision.user) } else { runners.remove(decision.user) }
            }
        }
        let (loops, isLive) = self.loops.withLock { $0 }
        for event in announcement.personal { appendPersonal(event, at: announcement.at, loops: isLive ? loops : nil) }
        guard let board = announcement.board else { return }
        let type = board.change.after.details.type
        let sequence = boardSequences.withLock { table -> UInt64 in
            table[type, default: 0] += 1
            return table[type]!
        }
        guard isLive, !feedWatchers.isZero else { return }
        let broadcast = FeedBroadcast(change: board.change, boardSequence: sequence,
                                      data: board.feedData ?? FeedBroadcast.Data(board.change.after))
        for weak in loops {
            guard let registry = weak.registry, registry.hasWatchers else { continue }
            registry.post(.feed(broadcast))
        }
    }

    /// `loops`: nil while recovering (numbered, delivered to no one).
    private func appendPersonal(_ event: Announcement.PersonalEvent, at: Timestamp, loops: [WeakRegistry]?) {
        streams.append(for: event.user, at: at, makeMessage: { sequence in
            switch event.payload {
            case .encoded(let data):
                EventMessage.personal(name: event.name, sequence: sequence, encodedData: data)
            case .orderChanged(let change, let view):
                EventMessage.personal(name: event.name, sequence: sequence, change: change, encodedView: view)
            }
        }, deliver: { sequence, bytes in
            // Under the stream lock, which a login also holds while it replays and registers:
            // a loop either has the session registered (and is sent it) or the replay has it.
            guard let loops else { return }
            var bits = presence.loops(of: event.user)
            guard bits != 0 else { return }
            let message = SharedMessage(text: bytes)
            while bits != 0 {
                let index = bits.trailingZeroBitCount
                bits &= bits - 1
                guard index < loops.count, let registry = loops[index].registry else { continue }
                registry.post(.personal(event.user, sequence: sequence, message))
            }
        })
    }

    private struct WeakRegistry {
        weak var registry: LoopRegistry?
    }
}
