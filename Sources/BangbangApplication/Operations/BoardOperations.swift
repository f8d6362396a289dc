// board.*: the Discover boards — a one-off listing, a live subscription, and the numbers a
// publisher sees before posting (protocol/operations-orders.md, "Boards").
import BangbangCore
import BangbangProtocol
import SocketServer
import Synchronization

package enum BoardOperations {
    package static let all: [Operation] = [list, subscribe, unsubscribe, stats]

    package static let list = Operation("board.list") { context, arguments throws(DomainError) in
        let query = try BoardWire.decodeListQuery(arguments)
        OrderOperations.list(query, app: context.app) { page in
            context.succeed(BoardWire.encode(page))
        }
    }

    /// What `board.subscribe` lists: its filter (types required), sort and limit; with
    /// `allowingCursor`, also the `cursor` a node pages a partition's part by (`node.board_list`).
    package static func subscriptionQuery(_ arguments: Arguments, allowingCursor: Bool = false) throws(DomainError) -> OrderListQuery {
        try arguments.allowOnly(BoardWire.filterFields.union(allowingCursor ? ["sort", "limit", "cursor"] : ["sort", "limit"]))
        let filter = try BoardWire.decodeFilter(arguments, typesRequired: true)
        let sort = try arguments.optionalChoice("sort", as: OrderSort.self) ?? .newest
        let limit = Int(try arguments.optionalInteger("limit", in: 1...100) ?? 100)
        let cursor = allowingCursor ? try BoardWire.decodeCursor(arguments) : nil
        return OrderListQuery(filter: filter, sort: sort, limit: limit, after: cursor)
    }

    package static let subscribe = Operation("board.subscribe") { context, arguments throws(DomainError) in
        let query = try subscriptionQuery(arguments)
        let app = context.app
        // Watch first, then list: an order that changes in between is both in the list and in
        // an event, never in neither; events carry the order's `revision` to tell which is newer.
        context.session.watch(query.filter)
        let sequences = query.filter.types.sorted { $0.rawValue < $1.rawValue }.map { ($0, app.boardSequence(of: $0)) }
        OrderOperations.list(query, app: app) { page in
            context.succeed([
                "orders": .array(page.items.map(OrderWire.encode)),
                "total": .integer(Int64(page.total)),
                "seq": .object(Dictionary(uniqueKeysWithValues: sequences.map { ($0.0.rawValue, JSONValue.integer(Int64($0.1))) })),
            ])
        }
    }

    package static let unsubscribe = Operation("board.unsubscribe") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        context.session.watch(nil)
        context.succeed()
    }

    /// Open orders and runners online, per type.
    package static let stats = Operation("board.stats") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        gatherStats(context.app) { stats in
            var object: [String: JSONValue] = [:]
            for type in OrderType.allCases {
                object[type.rawValue] = ["open": .integer(Int64(stats.open[type] ?? 0)),
                                         "runners_online": .integer(Int64(stats.runnersOnline[type]?.count ?? 0))]
            }
            context.succeed(["types": .object(object)])
        }
    }

    /// What the boards and the connected sessions look like now.
    package struct Stats: Sendable {
        package var open: [OrderType: Int] = [:]
        /// Verified runners watching each type.
        package var runnersOnline: [OrderType: Set<UserID>] = [:]
        /// Users with at least one logged-in connection.
        var usersOnline: Set<UserID> = []
    }

    /// Open orders per type over every shard (each counted on its own queue, concurrently);
    /// `completion` runs once, on the queue of the shard that finished last.
    static func gatherOpenCounts(_ app: Application, completion: @escaping @Sendable ([OrderType: Int]) -> Void) {
        OrderOperations.gather(over: Array(0..<app.shards.count), app: app, { ($0.index, $0.openCount) }) { parts in
            var open: [OrderType: Int] = [:]
            for (index, count) in parts { open[app.layout.type(ofShard: index), default: 0] += count }
            completion(open)
        }
    }

    /// Counts open orders on every shard and who is connected on every loop's registry (each on
    /// its own queue, concurrently); a user connected on two loops is counted once, so the
    /// per-loop sets are united before counting, with the runners other cluster nodes report
    /// watching. `completion` runs once, on whichever queue finished last.
    package static func gatherStats(_ app: Application, completion: @escaping @Sendable (Stats) -> Void) {
        let stats = Mutex(Stats(runnersOnline: app.runnersElsewhere.online(at: EventLoop.now)))
        let registries = app.publisher.loops.registries
        let remaining = Atomic<Int>(1 + registries.count)
        @Sendable func finishOne() {
            guard remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
            completion(stats.withLock { $0 })
        }
        gatherOpenCounts(app) { open in
            stats.withLock { $0.open = open }
            finishOne()
        }
        for registry in registries {
            registry.loop.execute {
                let users = registry.connectedUsers
                var watching: [OrderType: Set<UserID>] = [:]
                for type in OrderType.allCases {
                    watching[type] = registry.runnersWatching(type, isRunner: app.isApprovedRunner)
                }
                stats.withLock { stats in
                    stats.usersOnline.formUnion(users)
                    for (type, runners) in watching { stats.runnersOnline[type, default: []].formUnion(runners) }
                }
                finishOne()
            }
        }
    }
}
