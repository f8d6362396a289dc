// Boards and my orders on the wire (protocol/operations-orders.md): the Discover filter and
// listing query read from a request, listing pages and earnings summaries written back.
import BangbangCore

public enum BoardWire {
    /// The request members of a Discover filter, shared by `board.list` and `board.subscribe`.
    public static let filterFields: Set<String> = ["types", "campus", "min_tip", "keyword"]

    /// Reads `types`, `campus`, `min_tip` and `keyword`. Without `types` the filter covers
    /// every type when `typesRequired` is false (a listing), else it is an error (a feed must
    /// say what it watches, so a client never subscribes to the whole server by accident).
    public static func decodeFilter(_ arguments: Arguments, typesRequired: Bool) throws(DomainError) -> FeedFilter {
        var types: Set<OrderType> = []
        if arguments.has("types") || typesRequired {
            let names = try arguments.strings("types", maxCount: OrderType.allCases.count, maxLength: 16)
            for (index, name) in names.enumerated() {
                guard let type = OrderType(rawValue: name) else {
                    throw DomainError(.invalidField, "types[\(index)] must be one of: express, purchase, bounty, group",
                                      field: "types[\(index)]")
                }
                types.insert(type)
            }
            guard !types.isEmpty else {
                throw DomainError(.invalidField, "types must name at least one order type", field: "types")
            }
        } else {
            types = Set(OrderType.allCases)
        }
        return FeedFilter(types: types, campus: try arguments.optionalString("campus", maxLength: 60),
                          minimumTip: try arguments.optionalInteger("min_tip", in: 0...Int64.max),
                          keyword: try arguments.optionalString("keyword", maxLength: 60))
    }

    /// Largest `offset` of `board.list`: ten thousand orders deep is past any scrolling a person
    /// does, and each shard has to sort `offset + limit` orders to answer.
    public static let maximumOffset: Int64 = 10_000

    /// Reads a `board.list` request: the filter, `sort` (default newest), `limit` (1…100,
    /// default 20, a phone screen or two) and either `cursor` (from a previous page's
    /// `next_cursor`) or `offset`, not both.
    public static func decodeListQuery(_ arguments: Arguments) throws(DomainError) -> OrderListQuery {
        try arguments.allowOnly(filterFields.union(["sort", "limit", "cursor", "offset"]))
        let filter = try decodeFilter(arguments, typesRequired: false)
        let sort = try arguments.optionalChoice("sort", as: OrderSort.self) ?? .newest
        let limit = Int(try arguments.optionalInteger("limit", in: 1...100) ?? 20)
        let cursor = try decodeCursor(arguments)
        let offset = Int(try arguments.optionalInteger("offset", in: 0...maximumOffset) ?? 0)
        if cursor != nil && offset != 0 {
            throw DomainError(.invalidField, "offset cannot be combined with cursor; use one or the other", field: "offset")
        }
        return OrderListQuery(filter: filter, sort: sort, limit: limit, offset: offset, after: cursor)
    }

    /// The optional `cursor` of a paged listing: an opaque `next_cursor` the server gave out.
    public static func decodeCursor(_ arguments: Arguments) throws(DomainError) -> ListCursor? {
        guard let token = try arguments.optionalString("cursor", maxLength: 64) else { return nil }
        guard let cursor = ListCursor(token: token) else {
            throw DomainError(.invalidField, "cursor must be a next_cursor from a previous page", field: "cursor")
        }
        return cursor
    }

    /// `{"orders": […], "next_cursor": "…"}` of `orders.mine`; `next_cursor` only when more follow.
    public static func encode(_ page: MyOrdersPage) -> JSONValue {
        var object: [String: JSONValue] = ["orders": .array(page.items.map(OrderWire.encode))]
        if let cursor = page.nextCursor { object["next_cursor"] = .string(cursor.token) }
        return .object(object)
    }

    /// `{"orders": […], "total": N, "next_cursor": "…"}`; `next_cursor` only when more follow.
    public static func encode(_ page: OrderListPage) -> JSONValue {
        var object: [String: JSONValue] = [
            "orders": .array(page.items.map(OrderWire.encode)),
            "total": .integer(Int64(page.total)),
        ]
        if let cursor = page.nextCursor { object["next_cursor"] = .string(cursor.token) }
        return .object(object)
    }

    /// A runner's earnings summary; `total` is tips plus cancellation fees.
    public static func encode(_ earnings: RunnerEarnings) -> JSONValue {
        [
            "completed_count": .integer(Int64(earnings.completedCount)),
            "tips": .integer(earnings.tips),
            "cancellation_fees": .integer(earnings.cancellationFees),
            "total": .integer(earnings.total),
            "active_count": .integer(Int64(earnings.activeCount)),
            "rating_count": .integer(Int64(earnings.ratingCount)),
            "rating_stars": .integer(Int64(earnings.ratingStars)),
        ]
    }
}
