// orders.mine and runner.earnings: a user's own orders and a runner's takings, gathered from
// every shard and then from the order archive (protocol/operations-orders.md, "My orders";
// History.swift merges the two).
import BangbangCore
import BangbangProtocol
import OrderArchive

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
            guard History.reachesArchive(scope) else {
                return context.succeed(BoardWire.encode(MyOrdersPage.merge(parts, limit: limit)))
            }
            app.readArchive({ archive throws(ArchiveError) in
                try archive.orders(of: History.archiveID(user), as: History.archiveRole(role),
                                   before: History.archiveCursor(cursor), limit: limit + 1)
            }) { result in
                do throws(DomainError) {
                    let page = try History.page(live: parts, archived: try result.get(), viewer: user, scope: scope, limit: limit)
                    context.succeed(BoardWire.encode(page))
                } catch {
                    context.fail(error)
                }
            }
        }
    }

    static let earnings = Operation("runner.earnings") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let app = context.app
        let runner = context.user
        OrderOperations.gather(over: Array(0..<app.shards.count), app: app, {
            ($0.earnings(of: runner), $0.closedOrderIDs(ranBy: runner))
        }) { parts in
            let live = Set(parts.flatMap { $0.1 }.map(History.archiveID))
            app.readArchive({ archive throws(ArchiveError) in
                try archive.runnerTotals(of: History.archiveID(runner), excluding: live)
            }) { result in
                switch result {
                case .success(let archived):
                    context.succeed(BoardWire.encode(History.earnings(live: parts.map { $0.0 }, archived: archived)))
                case .failure(let error):
                    context.fail(error)
                }
            }
        }
    }
}
