// board.*: the Discover boards — a one-off listing, a live subscription, and the numbers a
// publisher sees before posting (protocol/operations-orders.md, "Boards").
import BangbangCore
import BangbangProtocol
import Synchronization

enum BoardOperations {
    static let all: [Operation] = [list, subscribe, unsubscribe, stats]

    static let list = Operation("board.list") { context, arguments throws(DomainError) in
        let query = try BoardWire.decodeListQuery(arguments)
        OrderOperations.list(query, app: context.app) { page in
            context.succeed(BoardWire.encode(page))
        }
    }

    static let subscribe = Operation("board.subscribe") { context, arguments throws(DomainError) in
        try arguments.allowOnly(BoardWire.filterFields.union(["sort", "limit"]))
        let filter = try BoardWire.decodeFilter(arguments, typesRequired: true)
        let sort = try arguments.optionalChoice("sort", as: OrderSort.self) ?? .newest
        let limit = Int(try arguments.optionalInteger("limit", in: 1...100) ?? 100)
        let app = context.app
        // Watch first, then list: an order that changes in between is both in the list and in
        // an event, never in neither; events carry the order's `revision` to tell which is newer.
        context.session.watch(filter)
        let sequences = filter.types.sorted { $0.rawValue < $1.rawValue }.map { ($0, app.boardSequence(of: $0)) }
        OrderOperations.list(OrderListQuery(filter: filter, sort: sort, limit: limit), app: app) { page in
            context.succeed([
                "orders": .array(page.items.map(OrderWire.encode)),
                "total": .integer(Int64(page.total)),
                "seq": .object(Dictionary(uniqueKeysWithValues: sequences.map { ($0.0.rawValue, JSONValue.integer(Int64($0.1))) })),
            ])
        }
    }

    static let unsubscribe = Operation("board.unsubscribe") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        context.session.watch(nil)
        context.succeed()
    }

    /// Open orders and runners online, per type. The open counts come from every shard, the
    /// runners from every loop's registry (each on its own queue); a runner connected on two
    /// loops is counted once, so the per-loop sets are united before counting.
    static let stats = Operation("board.stats") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let app = context.app
        let types = OrderType.allCases
        let openCounts = Mutex<[OrderType: Int]>([:])
        let runners = Mutex<[OrderType: Set<UserID>]>([:])
        let registries = app.registries
        let remaining = Atomic<Int>(2)
        @Sendable func finishOne() {
            guard remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
            let open = openCounts.withLock { $0 }
            let watching = runners.withLock { $0 }
            var object: [String: JSONValue] = [:]
            for type in types {
                object[type.rawValue] = ["open": .integer(Int64(open[type] ?? 0)),
                                         "runners_online": .integer(Int64(watching[type]?.count ?? 0))]
            }
            context.succeed(["types": .object(object)])
        }
        OrderOperations.gather(over: Array(0..<app.shards.count), app: app, { ($0.index, $0.openCount) }) { parts in
            for (index, count) in parts {
                let type = app.layout.type(ofShard: index)
                openCounts.withLock { $0[type, default: 0] += count }
            }
            finishOne()
        }
        let loopsLeft = Atomic<Int>(registries.count)
        guard !registries.isEmpty else { return finishOne() }
        for registry in registries {
            registry.loop.execute {
                for type in types {
                    let users = registry.runnersWatching(type, isRunner: app.isApprovedRunner)
                    runners.withLock { $0[type, default: []].formUnion(users) }
                }
                if loopsLeft.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { finishOne() }
            }
        }
    }
}
