// The history reads as the operations run them: the shards' part on each shard's own queue
// (`OrderOperations.gather`), then the archive's part on `historyQueue`, merged by `History`.
// Shards first, then the archive: see History.swift for why that order misses nothing.
import BangbangCore
import OrderArchive

extension Application {
    /// A page of `orders.mine`.
    func myOrders(of user: UserID, role: OrderRole, scope: OrderScope, after cursor: ListCursor?, limit: Int,
                  completion: @escaping @Sendable (Result<MyOrdersPage, DomainError>) -> Void) {
        // Only group shards hold shares; every role else may be on any shard.
        let indices = role == .joined ? Array(layout.shards(of: .group)) : Array(0..<shards.count)
        OrderOperations.gather(over: indices, app: self, {
            $0.orders(of: user, role: role, scope: scope, after: cursor, limit: limit + 1)
        }) { [self] parts in
            guard History.reachesArchive(scope) else { return completion(.success(MyOrdersPage.merge(parts, limit: limit))) }
            readArchive({ archive throws(ArchiveError) in
                try archive.orders(of: History.archiveID(user), as: History.archiveRole(role),
                                   before: History.archiveCursor(cursor), limit: limit + 1)
            }) { result in
                completion(result.flatMap { archived in
                    Result { () throws(DomainError) in
                        try History.page(live: parts, archived: archived, viewer: user, scope: scope, limit: limit)
                    }
                })
            }
        }
    }

    /// Order `id` as `viewer` (given the order) may see it, from its shard or else the archive.
    func orderView(_ id: OrderID, on owner: ShardOwner, viewer: @escaping @Sendable (Order) -> UserID?,
                   completion: @escaping @Sendable (Result<OrderView, DomainError>) -> Void) {
        owner.perform { [self] owner in
            if let order = owner.shard.order(id) { return completion(.success(OrderView(order, viewer: viewer(order)))) }
            readArchive({ archive throws(ArchiveError) in try archive.order(id: History.archiveID(id)) }) { result in
                completion(result.flatMap { record in
                    Result { () throws(DomainError) in try History.view(of: record, viewer: viewer) }
                })
            }
        }
    }

    /// What `runner` earned, over the shards and the archive, each order counted once.
    func runnerEarnings(of runner: UserID, completion: @escaping @Sendable (Result<RunnerEarnings, DomainError>) -> Void) {
        OrderOperations.gather(over: Array(0..<shards.count), app: self, {
            ($0.earnings(of: runner), $0.closedOrderIDs(ranBy: runner))
        }) { [self] parts in
            let live = Set(parts.flatMap { $0.1 }.map(History.archiveID))
            readArchive({ archive throws(ArchiveError) in
                try archive.runnerTotals(of: History.archiveID(runner), excluding: live)
            }) { result in
                completion(result.map { History.earnings(live: parts.map { $0.0 }, archived: $0) })
            }
        }
    }
}
