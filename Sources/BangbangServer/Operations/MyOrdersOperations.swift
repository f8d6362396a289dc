// orders.mine and runner.earnings: a user's own orders and a runner's takings, gathered from
// every shard (protocol/operations-orders.md, "My orders").
import BangbangCore
import BangbangProtocol

enum MyOrdersOperations {
    static let all: [Operation] = [mine, earnings]

    /// 50 orders, newest first: a screen and a half of the Orders tab. `limit` goes to 200;
    /// `cursor` (a previous page's `next_cursor`) continues after that page's last order.
    static let mine = Operation("orders.mine") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["role", "scope", "limit", "cursor"])
        let role = try arguments.optionalChoice("role", as: OrderRole.self) ?? .published
        let scope = try arguments.optionalChoice("scope", as: OrderScope.self) ?? .all
        let limit = Int(try arguments.optionalInteger("limit", in: 1...200) ?? 50)
        let cursor = try BoardWire.decodeCursor(arguments)
        let app = context.app
        let user = context.user
        // Only group shards hold shares; every role else may be on any shard.
        let indices = role == .joined ? Array(app.layout.shards(of: .group)) : Array(0..<app.shards.count)
        OrderOperations.gather(over: indices, app: app, {
            $0.orders(of: user, role: role, scope: scope, after: cursor, limit: limit + 1)
        }) { parts in
            context.succeed(BoardWire.encode(MyOrdersPage.merge(parts, limit: limit)))
        }
    }

    static let earnings = Operation("runner.earnings") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let app = context.app
        let runner = context.user
        OrderOperations.gather(over: Array(0..<app.shards.count), app: app, { $0.earnings(of: runner) }) { parts in
            context.succeed(BoardWire.encode(parts.reduce(RunnerEarnings(), +)))
        }
    }
}
