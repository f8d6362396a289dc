// orders.mine and runner.earnings: a user's own orders and a runner's takings, gathered from
// every shard and then from the order archive (protocol/operations-orders.md, "My orders";
// History.swift merges the two).
import BangbangCore
import BangbangProtocol

package enum MyOrdersOperations {
    package static let all: [Operation] = [mine, earnings]

    /// 50 orders, newest first: a screen and a half of the Orders tab. `limit` goes to 200;
    /// `cursor` (a previous page's `next_cursor`) continues after that page's last order.
    package static let mine = Operation("orders.mine") { context, arguments throws(DomainError) in
        let query = try MineQuery(arguments)
        context.app.myOrders(of: context.user, role: query.role, scope: query.scope, after: query.cursor, limit: query.limit) { result in
            context.reply(result.map(BoardWire.encode))
        }
    }

    /// What `orders.mine` asks for, checked.
    package struct MineQuery: Sendable, Equatable {
        package var role: OrderRole
        package var scope: OrderScope
        package var limit: Int
        package var cursor: ListCursor?

        package init(_ arguments: Arguments) throws(DomainError) {
            try arguments.allowOnly(["role", "scope", "limit", "cursor"])
            role = try arguments.optionalChoice("role", as: OrderRole.self) ?? .published
            scope = try arguments.optionalChoice("scope", as: OrderScope.self) ?? .all
            limit = Int(try arguments.optionalInteger("limit", in: 1...200) ?? 50)
            cursor = try BoardWire.decodeCursor(arguments)
        }
    }

    package static let earnings = Operation("runner.earnings") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        context.app.runnerEarnings(of: context.user) { result in
            context.reply(result.map(BoardWire.encode))
        }
    }
}
