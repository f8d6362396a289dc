// order.* and board.*: publishing, the boards and their live feed, and every step of an
// order's life (protocol/operations.md, "Orders" and "Boards").
import BangbangCore
import BangbangProtocol
import Crypto
import Synchronization

enum OrderOperations {
    static let all: [Operation] = [publish, get, accept, subscribe, unsubscribe]

    /// Spreads new orders over the shards of their type.
    private static let nextShard = Atomic<Int>(0)

    static let publish = Operation("order.publish") { context, arguments throws(DomainError) in
        let draft = try OrderWire.decodeDraft(arguments)
        let app = context.app
        let shards = app.layout.shards(of: draft.type)
        let index = shards.lowerBound + nextShard.add(1, ordering: .relaxed).oldValue % shards.count
        let publisher = context.user
        app.shards[index].perform { executor in
            do throws(DomainError) {
                let now = app.clock()
                var random = SecureRandomNumberGenerator()
                let event = try executor.shard.decidePublish(draft, by: publisher, now: now, rules: app.orderRules, using: &random)
                commit(event, on: executor, context: context) { applied in
                    ["order": OrderWire.encode(OrderView(applied.after, viewer: publisher))]
                }
            } catch {
                context.fail(error)
            }
        }
    }

    static let get = Operation("order.get") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id"])
        let (executor, id) = try shard(for: arguments, in: context.app)
        let viewer = context.user
        executor.perform { executor in
            do throws(DomainError) {
                context.succeed(["order": OrderWire.encode(try executor.shard.detail(id, viewer: viewer))])
            } catch {
                context.fail(error)
            }
        }
    }

    static let accept = Operation("order.accept") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id"])
        let (executor, id) = try shard(for: arguments, in: context.app)
        let runner = context.user
        let isVerified = context.app.isApprovedRunner(runner)
        run(.accept(isVerifiedRunner: isVerified), on: id, executor: executor, context: context) { error in
            if error.code == .orderTaken || error.code == .orderClosed { context.app.metrics.racesLost.increment() }
        } succeeded: {
            context.app.metrics.accepts.increment()
        }
    }

    static let subscribe = Operation("board.subscribe") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["types", "campus", "min_tip", "keyword", "sort", "limit"])
        let typeNames = try arguments.strings("types", maxCount: OrderType.allCases.count, maxLength: 16)
        var types: Set<OrderType> = []
        for (index, name) in typeNames.enumerated() {
            guard let type = OrderType(rawValue: name) else {
                throw DomainError(.invalidField, "types[\(index)] must be one of: express, purchase, bounty, group",
                                  field: "types[\(index)]")
            }
            types.insert(type)
        }
        guard !types.isEmpty else { throw DomainError(.invalidField, "types must name at least one order type", field: "types") }
        let filter = FeedFilter(types: types, campus: try arguments.optionalString("campus", maxLength: 60),
                                minimumTip: try arguments.optionalInteger("min_tip", in: 0...Int64.max),
                                keyword: try arguments.optionalString("keyword", maxLength: 60))
        let sort = try arguments.optionalChoice("sort", as: OrderSort.self) ?? .newest
        let limit = Int(try arguments.optionalInteger("limit", in: 1...100) ?? 100)
        let app = context.app
        // Watch first, then list: an order that changes in between is both in the list and in
        // an event, never in neither; events carry the order's `revision` to tell which is newer.
        context.session.watch(filter)
        let sequences = types.sorted { $0.rawValue < $1.rawValue }.map { ($0, app.boardSequence(of: $0)) }
        list(OrderListQuery(filter: filter, sort: sort, limit: limit), app: app) { page in
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

    // MARK: Helpers shared by the order operations

    /// The shard that owns the order named by `order_id`.
    static func shard(for arguments: Arguments, in app: Application) throws(DomainError) -> (ShardExecutor, OrderID) {
        let raw = try arguments.integer("order_id", in: 1...Int64.max)
        let id = OrderID(rawValue: UInt64(raw))
        guard app.shards.indices.contains(id.shard) else { throw DomainError(.notFound, "no such order") }
        return (app.shards[id.shard], id)
    }

    /// Decides `command` on the order's owner, applies and commits it, and replies with the
    /// order as the caller now sees it. `failed` / `succeeded` are for metrics.
    static func run(_ command: OrderCommand, on id: OrderID, executor: ShardExecutor, context: OperationContext,
                    failed: @escaping @Sendable (DomainError) -> Void = { _ in },
                    succeeded: @escaping @Sendable () -> Void = {}) {
        let app = context.app
        let actor = context.user
        executor.perform { executor in
            do throws(DomainError) {
                let event = try executor.shard.decide(command, on: id, by: actor, now: app.clock(), rules: app.orderRules)
                commit(event, on: executor, context: context) { applied in
                    succeeded()
                    return ["order": OrderWire.encode(OrderView(applied.after, viewer: actor))]
                }
            } catch {
                failed(error)
                context.fail(error)
            }
        }
    }

    /// Applies a decided event on its shard, commits it, and replies once it is durable.
    /// Runs on the shard's queue.
    static func commit(_ event: OrderEvent, on executor: ShardExecutor, context: OperationContext,
                       reply: @escaping @Sendable (AppliedOrderChange) -> JSONValue) {
        let app = context.app
        let applied = executor.shard.apply(event)
        app.armTimer(executor)
        app.commit(.order(shard: executor.shard.index, event), applied: .order(applied)) { result in
            switch result {
            case .success: context.succeed(reply(applied))
            case .failure(let error): context.fail(error)
            }
        }
    }

    /// Lists open orders over every shard of the filter's types and merges the parts.
    static func list(_ query: OrderListQuery, app: Application, completion: @escaping @Sendable (OrderListPage) -> Void) {
        let indices = query.filter.types.flatMap { app.layout.shards(of: $0) }
        let parts = Mutex<[OrderListPart]>([])
        let remaining = Atomic<Int>(indices.count)
        for index in indices {
            app.shards[index].perform { executor in
                let part = executor.shard.listOpen(query)
                parts.withLock { $0.append(part) }
                if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                    completion(OrderListPage.merge(parts.withLock { $0 }, query: query))
                }
            }
        }
    }
}
