// order.*: publishing and every step of an order's life (protocol/operations-orders.md), plus
// the helpers the board and my-orders operations share: routing by order id, decide → commit
// on the owner → reply, and fanning a query out over shards.
import BangbangCore
import BangbangProtocol
import Crypto
import Dispatch
import OrderArchive
import Synchronization

package enum OrderOperations {
    package static let all: [Operation] = [
        publish, get, accept, pickUp, start, deliver, confirm, abandon, cancel, raiseTip,
        join, leave, complete, rate,
    ]

    /// Spreads new orders over the shards of their type.
    private static let nextShard = Atomic<Int>(0)

    package static let publish = Operation("order.publish") { context, arguments throws(DomainError) in
        let app = context.app
        let draft = try OrderWire.decodeDraft(arguments, checks: .init(now: app.clock(), rules: app.orderRules))
        let shards = app.layout.shards(of: draft.type)
        let index = shards.lowerBound + nextShard.add(1, ordering: .relaxed).oldValue % shards.count
        let publisher = context.user
        app.shards[index].perform { owner in
            do throws(DomainError) {
                let now = app.clock()
                var random = SecureRandomNumberGenerator()
                let event = try owner.shard.decidePublish(draft, by: publisher, now: now, rules: app.orderRules, using: &random)
                commit(event, on: owner, context: context) {
                    app.recentPublishes.record(draft.type, at: now)
                }
            } catch {
                context.fail(OrderWire.publishError(error))
            }
        }
    }

    /// From the order's shard, or from the archive once the shard no longer holds it.
    package static let get = Operation("order.get") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id"])
        let app = context.app
        let (owner, id) = try shard(for: arguments, in: app)
        let viewer = context.user
        app.orderView(id, on: owner, viewer: { _ in viewer }) { result in
            switch result {
            case .success(let view): context.succeed(encoded: OrderWire.orderData(view))
            case .failure(let error): context.fail(error)
            }
        }
    }

    static let accept = Operation("order.accept") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id"])
        let (owner, id) = try shard(for: arguments, in: context.app)
        run(.accept(isVerifiedRunner: context.isApprovedRunner), on: id, owner: owner, context: context) { error in
            if error.code == .orderTaken || error.code == .orderClosed { context.app.metrics.racesLost.increment() }
        } succeeded: {
            context.app.metrics.accepts.increment()
        }
    }

    // MARK: Steps of an order's life. Each is one `OrderCommand` decided on the order's shard.

    /// An operation whose only field is `order_id`, running `command`.
    private static func step(_ name: String, _ command: OrderCommand) -> Operation {
        Operation(name) { context, arguments throws(DomainError) in
            try arguments.allowOnly(["order_id"])
            let (owner, id) = try shard(for: arguments, in: context.app)
            run(command, on: id, owner: owner, context: context)
        }
    }

    static let pickUp = step("order.pick_up", .pickUp)
    package static let start = step("order.start", .start)
    static let confirm = step("order.confirm", .confirm)
    static let abandon = step("order.abandon", .abandon)
    static let join = step("order.join", .join)
    static let leave = step("order.leave", .leave)
    static let complete = step("order.complete", .complete)

    static let deliver = Operation("order.deliver") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id", "code"])
        let id = try orderID(arguments)
        let code = try arguments.optionalString("code", maxLength: 16)
        let owner = try existingOwner(of: id, in: context.app)
        run(.deliver(code: code), on: id, owner: owner, context: context)
    }

    static let cancel = Operation("order.cancel") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id", "reason"])
        let id = try orderID(arguments)
        let reason = try arguments.optionalString("reason", maxLength: context.app.orderRules.maximumLongText)
        let owner = try existingOwner(of: id, in: context.app)
        run(.cancel(reason: reason), on: id, owner: owner, context: context)
    }

    static let raiseTip = Operation("order.raise_tip") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id", "tip"])
        let id = try orderID(arguments)
        let tip = try arguments.integer("tip", in: 0...context.app.orderRules.maximumTip)
        let owner = try existingOwner(of: id, in: context.app)
        run(.raiseTip(to: tip), on: id, owner: owner, context: context)
    }

    static let rate = Operation("order.rate") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id", "stars", "comment"])
        let id = try orderID(arguments)
        let stars = Int(try arguments.integer("stars", in: 1...5))
        let comment = try arguments.optionalString("comment", maxLength: context.app.orderRules.maximumCommentLength) ?? ""
        let owner = try existingOwner(of: id, in: context.app)
        let app = context.app
        let actor = context.user
        owner.perform { owner in
            guard owner.shard.order(id) == nil else {
                do throws(DomainError) {
                    let event = try owner.shard.decide(.rate(stars: stars, comment: comment), on: id, by: actor,
                                                       now: app.clock(), rules: app.orderRules)
                    commit(event, on: owner, context: context)
                } catch {
                    context.fail(error)
                }
                return
            }
            // Not in memory: an order that moved to the archive did so after its rating window.
            // The archive is read off the owner's queue.
            DispatchQueue.global(qos: .userInitiated).async {
                context.fail(rateRefusal(archived: (try? app.archive.order(id: String(id.rawValue))) ?? nil, by: actor))
            }
        }
    }

    /// Why `order.rate` of an order no longer in memory fails: the archive has it (so its rating
    /// window has passed), or no order has this id.
    static func rateRefusal(archived: ArchivedOrder?, by actor: UserID) -> DomainError {
        guard let archived else { return DomainError(.notFound, "no such order") }
        guard [archived.publisher, archived.runner].contains(String(actor.rawValue)) else {
            return DomainError(.notYourOrder, "only the publisher and the runner rate an order")
        }
        return DomainError(.invalidTransition, "the rating window has closed")
    }

    // MARK: Helpers shared by the order operations

    // Every field is read before the order is looked for: `invalid_field` comes before
    // `not_found` (protocol/README.md, "Error precedence").

    /// The shard that owns the order named by `order_id`, for operations with no other field.
    static func shard(for arguments: Arguments, in app: Application) throws(DomainError) -> (ShardOwner, OrderID) {
        let id = try orderID(arguments)
        return (try existingOwner(of: id, in: app), id)
    }

    /// The shard that owns order `id`, or `not_found`.
    static func existingOwner(of id: OrderID, in app: Application) throws(DomainError) -> ShardOwner {
        guard let found = owner(of: id, in: app) else { throw DomainError(.notFound, "no such order") }
        return found
    }

    /// The `order_id` of a request (≥ 1).
    static func orderID(_ arguments: Arguments) throws(DomainError) -> OrderID {
        OrderID(rawValue: UInt64(try arguments.integer("order_id", in: 1...Int64.max)))
    }

    /// The shard that owns order `id`; nil when no shard could (so no such order exists).
    static func owner(of id: OrderID, in app: Application) -> ShardOwner? {
        app.shards.indices.contains(id.shard) ? app.shards[id.shard] : nil
    }

    /// Decides `command` on the order's owner, commits it there, and replies with the
    /// order as the caller now sees it. `failed` / `succeeded` are for metrics.
    static func run(_ command: OrderCommand, on id: OrderID, owner: ShardOwner, context: OperationContext,
                    failed: @escaping @Sendable (DomainError) -> Void = { _ in },
                    succeeded: @escaping @Sendable () -> Void = {}) {
        let app = context.app
        let actor = context.user
        owner.perform { owner in
            do throws(DomainError) {
                let event = try owner.shard.decide(command, on: id, by: actor, now: app.clock(), rules: app.orderRules)
                commit(event, on: owner, context: context, succeeded: succeeded)
            } catch {
                failed(error)
                context.fail(error)
            }
        }
    }

    /// Commits a decided event on its shard and replies, once it is durable, with the order as
    /// the caller now sees it (encoded once by the owner, for the reply and for the caller's own
    /// `order.changed` push). Runs on the shard's queue.
    package static func commit(_ event: OrderEvent, on owner: ShardOwner, context: OperationContext,
                       succeeded: @escaping @Sendable () -> Void = {}) {
        owner.commit(event, for: context.user) { result in
            switch result {
            case .success(let committed):
                guard let view = committed.actorView else { fatalError("internal inconsistency in OrderOperations.commit: no view for the actor") }
                succeeded()
                context.succeed(orderView: view)
            case .failure(let error):
                context.fail(error)
            }
        }
    }

    /// Lists open orders over every shard of the filter's types and merges the parts.
    package static func list(_ query: OrderListQuery, app: Application, completion: @escaping @Sendable (OrderListPage) -> Void) {
        let indices = query.filter.types.flatMap { app.layout.shards(of: $0) }
        gather(over: indices, app: app, { $0.listOpen(query) }) { parts in
            completion(OrderListPage.merge(parts, query: query))
        }
    }

    /// Runs `query` on each of the shards `indices` (on each shard's own queue, concurrently)
    /// and calls `completion` once with every result, in no particular order, from the queue
    /// of the shard that finished last. No queue waits for another.
    package static func gather<Part: Sendable>(over indices: [Int], app: Application,
                                       _ query: @escaping @Sendable (BoardShard) -> Part,
                                       completion: @escaping @Sendable ([Part]) -> Void) {
        guard !indices.isEmpty else { return completion([]) }
        let parts = Mutex<[Part]>([])
        let remaining = Atomic<Int>(indices.count)
        for index in indices {
            app.shards[index].perform { owner in
                let part = query(owner.shard)
                parts.withLock { $0.append(part) }
                if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                    completion(parts.withLock { $0 })
                }
            }
        }
    }
}
