// Board listings, per shard and merged across the shards of a type.

/// The orders of a Discover list.
public enum OrderSort: String, CaseIterable, Codable, Hashable, Sendable {
    /// Latest published first.
    case newest
    /// Highest tip first.
    case tip
    /// Soonest deadline first.
    case deadline

    /// The sort value of an order; ties break on the id, in the same direction.
    public func key(_ view: OrderView) -> Int64 {
        switch self {
        case .newest: view.createdAt.milliseconds
        case .tip: view.tip
        case .deadline: view.deadline.milliseconds
        }
    }

    func key(_ order: Order) -> Int64 {
        switch self {
        case .newest: order.createdAt.milliseconds
        case .tip: order.tip
        case .deadline: order.deadline.milliseconds
        }
    }

    /// Whether (key, id) a comes before b in this sort.
    public func precedes(_ a: (Int64, OrderID), _ b: (Int64, OrderID)) -> Bool {
        switch self {
        case .newest, .tip: a.0 != b.0 ? a.0 > b.0 : a.1 > b.1
        case .deadline: a.0 != b.0 ? a.0 < b.0 : a.1 < b.1
        }
    }
}

/// Where the previous page ended: the sort key and id of its last order. Stable while orders
/// come and go (unlike an offset), except that a tip bump can move an order across it.
public struct ListCursor: Codable, Hashable, Sendable {
    public var key: Int64
    public var id: OrderID

    public init(key: Int64, id: OrderID) {
        self.key = key
        self.id = id
    }

    /// The wire form, "key:id".
    public var token: String { "\(key):\(id.rawValue)" }

    public init?(token: String) {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let key = Int64(parts[0]), let raw = UInt64(parts[1]) else { return nil }
        self.init(key: key, id: OrderID(rawValue: raw))
    }
}

/// A Discover query. Use either `after` (cursor paging) or `offset`.
public struct OrderListQuery: Codable, Hashable, Sendable {
    public var filter: FeedFilter
    public var sort: OrderSort
    /// Page size; clamped to 1…100 so one request cannot ask for the whole board.
    public var limit: Int
    public var offset: Int
    public var after: ListCursor?

    public init(filter: FeedFilter = FeedFilter(), sort: OrderSort = .newest, limit: Int = 20,
                offset: Int = 0, after: ListCursor? = nil) {
        self.filter = filter
        self.sort = sort
        self.limit = min(max(limit, 1), 100)
        self.offset = max(offset, 0)
        self.after = after
    }
}

extension OrderListQuery {
    private enum CodingKeys: String, CodingKey { case filter, sort, limit, offset, after }

    /// Decodes through `init`, so the limit and offset are clamped whatever the input says.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(filter: try container.decodeIfPresent(FeedFilter.self, forKey: .filter) ?? FeedFilter(),
                  sort: try container.decodeIfPresent(OrderSort.self, forKey: .sort) ?? .newest,
                  limit: try container.decodeIfPresent(Int.self, forKey: .limit) ?? 20,
                  offset: try container.decodeIfPresent(Int.self, forKey: .offset) ?? 0,
                  after: try container.decodeIfPresent(ListCursor.self, forKey: .after))
    }
}

/// One shard's contribution to a listing: its first `offset + limit` matches after the cursor,
/// sorted, and how many open orders match in all.
public struct OrderListPart: Codable, Hashable, Sendable {
    public var items: [OrderView]
    public var matchCount: Int
    /// More matches follow `items` in this shard.
    public var hasMore: Bool
}

/// A page of a Discover list.
public struct OrderListPage: Codable, Hashable, Sendable {
    public var items: [OrderView]
    /// Pass back as `after` for the next page; nil when this page is the last.
    public var nextCursor: ListCursor?
    /// Open orders matching the filter, over every shard asked.
    public var total: Int

    /// Merges the parts of the shards of one fan-out into one page: a k-way merge of sorted
    /// lists, then the offset and the limit.
    public static func merge(_ parts: [OrderListPart], query: OrderListQuery) -> OrderListPage {
        let (page, cursor) = mergeSorted(parts.map(\.items), query: query, anyHasMore: parts.contains(where: \.hasMore)) {
            (query.sort.key($0), $0.id)
        }
        return OrderListPage(items: page, nextCursor: cursor, total: parts.reduce(0) { $0 + $1.matchCount })
    }

    /// The page of `query` from lists each sorted by it (a shard's or a partition's first
    /// `offset + limit` matches): a k-way merge, then the offset and the limit, and the cursor to
    /// the next page when anything follows (in a list, or after one, `anyHasMore`).
    public static func mergeSorted<Item>(_ lists: [[Item]], query: OrderListQuery, anyHasMore: Bool,
                                         position: (Item) -> (Int64, OrderID)) -> (page: [Item], nextCursor: ListCursor?) {
        let wanted = query.offset + query.limit
        var heads = [Int](repeating: 0, count: lists.count)
        var merged: [Item] = []
        merged.reserveCapacity(min(wanted, lists.reduce(0) { $0 + $1.count }))
        while merged.count < wanted {
            var best: Int?
            for (list, head) in heads.enumerated() where head < lists[list].count {
                if let current = best {
                    if query.sort.precedes(position(lists[list][head]), position(lists[current][heads[current]])) { best = list }
                } else {
                    best = list
                }
            }
            guard let best else { break }
            merged.append(lists[best][heads[best]])
            heads[best] += 1
        }
        let remaining = lists.enumerated().contains { heads[$0.offset] < $0.element.count }
        let page = Array(merged.dropFirst(query.offset))
        let cursor = remaining || anyHasMore ? page.last.map { ListCursor(key: position($0).0, id: position($0).1) } : nil
        return (page, cursor)
    }
}

extension BoardShard {
    /// This shard's part of a Discover listing, as seen anonymously (no private fields).
    public func listOpen(_ query: OrderListQuery) -> OrderListPart {
        let sort = query.sort
        var matching: [Order] = []
        var matchCount = 0
        for id in openIDs {
            guard let order = orders[id], query.filter.matches(order) else { continue }
            matchCount += 1
            if let after = query.after, !sort.precedes((after.key, after.id), (sort.key(order), order.id)) {
                continue
            }
            matching.append(order)
        }
        matching.sort { sort.precedes((sort.key($0), $0.id), (sort.key($1), $1.id)) }
        let wanted = query.offset + query.limit
        let items = matching.prefix(wanted).map { OrderView($0, viewer: nil) }
        return OrderListPart(items: items, matchCount: matchCount, hasMore: matching.count > wanted)
    }
}
