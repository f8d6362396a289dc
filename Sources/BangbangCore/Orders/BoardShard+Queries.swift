// Read-only queries of a board shard: order detail, my orders, runner earnings.

/// Which of a user's orders "my orders" lists.
public enum OrderRole: String, CaseIterable, Codable, Hashable, Sendable {
    case published
    /// Orders the user runs or ran (including ones cancelled while they held them).
    case accepted
    /// Group orders the user holds a share of.
    case joined
}

/// Active orders still move; history is completed, cancelled and expired ones.
public enum OrderScope: String, CaseIterable, Codable, Hashable, Sendable {
    case active, history, all

    public func includes(_ status: OrderStatus) -> Bool {
        switch self {
        case .active: !status.isTerminal
        case .history: status.isTerminal
        case .all: true
        }
    }
}

/// What a runner earned; add the summaries of every shard for the whole picture.
public struct RunnerEarnings: Codable, Hashable, Sendable {
    public var completedCount = 0
    /// Tips of completed orders.
    public var tips: Cents = 0
    /// Fees from publishers who cancelled after the grace window.
    public var cancellationFees: Cents = 0
    /// Orders the runner holds now.
    public var activeCount = 0
    /// Ratings the runner received from publishers: how many, and their stars summed.
    public var ratingCount = 0
    public var ratingStars = 0

    public init() {}

    public var total: Cents { tips + cancellationFees }

    public static func + (lhs: RunnerEarnings, rhs: RunnerEarnings) -> RunnerEarnings {
        var sum = lhs
        sum.completedCount += rhs.completedCount
        sum.tips += rhs.tips
        sum.cancellationFees += rhs.cancellationFees
        sum.activeCount += rhs.activeCount
        sum.ratingCount += rhs.ratingCount
        sum.ratingStars += rhs.ratingStars
        return sum
    }
}

extension BoardShard {
    /// The order detail as `viewer` may see it; not_found if this shard does not own it.
    public func detail(_ id: OrderID, viewer: UserID?) throws(DomainError) -> OrderView {
        guard let order = orders[id] else { throw DomainError(.notFound, "no such order") }
        return OrderView(order, viewer: viewer)
    }

    /// A user's orders in one role, newest first (by `createdAt`, then id), as they may see
    /// them: at most `limit`, and only those after `cursor` (the last order of the previous
    /// page) when one is given. Combine the shards of a fan-out with `MyOrdersPage.merge`.
    public func orders(of user: UserID, role: OrderRole, scope: OrderScope, after cursor: ListCursor? = nil,
                       limit: Int = .max) -> [OrderView] {
        orderRecords(of: user, role: role, scope: scope, after: cursor, limit: limit).map { OrderView($0, viewer: user) }
    }

    /// The orders themselves that `orders(of:role:scope:after:limit:)` shows, in the same order.
    public func orderRecords(of user: UserID, role: OrderRole, scope: OrderScope, after cursor: ListCursor? = nil,
                             limit: Int = .max) -> [Order] {
        let ids: Set<OrderID>?
        switch role {
        case .published: ids = publishedBy[user]
        case .accepted: ids = runningBy[user]
        case .joined: ids = joinedBy[user]
        }
        guard let ids else { return [] }
        var result: [Order] = []
        for id in ids {
            guard let order = orders[id], scope.includes(order.status) else { continue }
            if let cursor, !MyOrdersPage.isNewer((cursor.key, cursor.id), than: (order.createdAt.milliseconds, order.id)) {
                continue
            }
            result.append(order)
        }
        result.sort { MyOrdersPage.isNewer(($0.createdAt.milliseconds, $0.id), than: ($1.createdAt.milliseconds, $1.id)) }
        return Array(result.prefix(limit))
    }

    /// The closed orders `runner` ran that this shard still holds: the ones an archive may hold
    /// too, so that totals over both count each once.
    public func closedOrderIDs(ranBy runner: UserID) -> Set<OrderID> {
        (runningBy[runner] ?? []).filter { orders[$0]?.status.isTerminal == true }
    }

    /// What `runner` earned on this shard's orders.
    public func earnings(of runner: UserID) -> RunnerEarnings {
        var summary = RunnerEarnings()
        for id in runningBy[runner] ?? [] {
            guard let order = orders[id] else { continue }
            switch order.status {
            case .completed:
                summary.completedCount += 1
                summary.tips += order.tip
            case .cancelled:
                summary.cancellationFees += order.cancellation?.fee ?? 0
            default:
                if order.status.isRunning || order.status == .delivered { summary.activeCount += 1 }
            }
            if let rating = order.ratingByPublisher {
                summary.ratingCount += 1
                summary.ratingStars += rating.stars
            }
        }
        return summary
    }
}

/// A page of "my orders", newest first. Orders are ordered by (`createdAt`, id), neither of
/// which ever changes, and a new order is newer than every existing one, so paging with the
/// cursor never skips or repeats an order, whatever is published or changes between pages.
public struct MyOrdersPage: Hashable, Sendable {
    public var items: [OrderView]
    /// Pass back as `after` for the next page; nil when this page is the last.
    public var nextCursor: ListCursor?

    /// Merges per-shard results into one page of `limit`. Each part must hold that shard's
    /// first `limit + 1` orders after the cursor (newest first), so that a page that is not the
    /// last can be told from one that is.
    public static func merge(_ parts: [[OrderView]], limit: Int) -> MyOrdersPage {
        var merged = parts.flatMap { $0 }
        merged.sort { isNewer(($0.createdAt.milliseconds, $0.id), than: ($1.createdAt.milliseconds, $1.id)) }
        let items = Array(merged.prefix(limit))
        let cursor = merged.count > limit ? items.last.map { ListCursor(key: $0.createdAt.milliseconds, id: $0.id) } : nil
        return MyOrdersPage(items: items, nextCursor: cursor)
    }

    public static func isNewer(_ a: (Int64, OrderID), than b: (Int64, OrderID)) -> Bool {
        a.0 != b.0 ? a.0 > b.0 : a.1 > b.1
    }
}

/// How the server lays the shards out: `shardsPerType` consecutive shards per order type, in
/// `OrderType.allCases` order, so a shard's type follows from its index.
public struct BoardLayout: Codable, Hashable, Sendable {
    public let shardsPerType: Int

    public init(shardsPerType: Int) {
        precondition(shardsPerType >= 1 && shardsPerType * OrderType.allCases.count <= 1 << OrderID.shardBits,
                     "shardsPerType out of range")
        self.shardsPerType = shardsPerType
    }

    public var shardCount: Int { shardsPerType * OrderType.allCases.count }

    /// The indexes of the shards of one type: fan list queries out over these.
    public func shards(of type: OrderType) -> Range<Int> {
        let start = OrderType.allCases.firstIndex(of: type)! * shardsPerType
        return start..<(start + shardsPerType)
    }

    /// The type whose orders shard `index` holds.
    public func type(ofShard index: Int) -> OrderType {
        precondition(index >= 0 && index < shardCount, "shard index out of range")
        return OrderType.allCases[index / shardsPerType]
    }
}
