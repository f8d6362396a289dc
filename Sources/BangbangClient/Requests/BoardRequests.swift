// board.* and "my orders" (operations-orders.md, "Boards" and "My orders").
import JSON

/// The Discover filter shared by `board.list` and `board.subscribe`.
public struct BoardFilter: Sendable, Hashable {
    /// 1–4 types. `board.list` with none lists every type.
    public var types: [OrderType]
    /// Exact match.
    public var campus: String?
    /// Fen.
    public var minimumTip: Int?
    /// Case-insensitive substring of the order's public text.
    public var keyword: String?
    /// nil: the server's default, newest first.
    public var sort: BoardSort?

    public init(types: [OrderType], campus: String? = nil, minimumTip: Int? = nil, keyword: String? = nil,
                sort: BoardSort? = nil) {
        self.types = types
        self.campus = campus
        self.minimumTip = minimumTip
        self.keyword = keyword
        self.sort = sort
    }

    var wireMembers: WireObjectBuilder {
        var object = WireObjectBuilder()
        if !types.isEmpty { object["types"] = .array(types.map(\.wireValue)) }
        object["campus"] = campus.map(JSONValue.string)
        object["min_tip"] = minimumTip.map { .integer(Int64($0)) }
        object["keyword"] = keyword.map(JSONValue.string)
        object["sort"] = sort?.wireValue
        return object
    }
}

/// `board.list`: one page of open orders.
public struct ListBoard: BangbangRequest {
    public var filter: BoardFilter
    /// 1–100; nil: 20.
    public var limit: Int?
    /// A `nextCursor` from the previous page of the same filter.
    public var cursor: String?
    /// 0–10,000; not with `cursor` (which does not skip or repeat when orders come and go).
    public var offset: Int?

    public init(_ filter: BoardFilter, limit: Int? = nil, cursor: String? = nil, offset: Int? = nil) {
        self.filter = filter
        self.limit = limit
        self.cursor = cursor
        self.offset = offset
    }

    public var operation: String { "board.list" }
    public var data: JSONValue? {
        var object = filter.wireMembers
        object["limit"] = limit.map { .integer(Int64($0)) }
        object["cursor"] = cursor.map(JSONValue.string)
        object["offset"] = offset.map { .integer(Int64($0)) }
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> BoardPage { try BoardPage(wire: data, at: []) }
}

/// `board.subscribe`: watch boards live; replaces the connection's earlier subscription. The
/// connection subscribes again after every reconnect and reports each new list on
/// `boardFeed()`; `Board` keeps a list in step with it.
public struct SubscribeBoard: BangbangRequest {
    public var filter: BoardFilter
    /// How many orders the first list holds: 1–100; nil: 100.
    public var limit: Int?

    public init(_ filter: BoardFilter, limit: Int? = nil) {
        precondition(!filter.types.isEmpty, "board.subscribe needs at least one type")
        self.filter = filter
        self.limit = limit
    }

    public var operation: String { "board.subscribe" }
    public var data: JSONValue? {
        var object = filter.wireMembers
        object["limit"] = limit.map { .integer(Int64($0)) }
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> BoardSnapshot { try BoardSnapshot(wire: data, at: []) }
    public var effect: RequestEffect { RequestEffect(kind: .subscribe(filter, limit: limit)) }
}

/// `board.unsubscribe`: stop the feed.
public struct UnsubscribeBoard: BangbangRequest {
    public init() {}
    public var operation: String { "board.unsubscribe" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) { try empty(data) }
    public var effect: RequestEffect { RequestEffect(kind: .unsubscribe) }
}

/// `board.stats`: per type, open orders and runners online.
public struct GetBoardStatistics: BangbangRequest {
    public init() {}
    public var operation: String { "board.stats" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> BoardStatistics {
        try BoardStatistics(wire: data, at: [])
    }
}

/// `orders.mine`: my orders, newest first.
public struct MyOrders: BangbangRequest {
    /// nil: `published`.
    public var role: OrderRole?
    /// nil: `all`.
    public var scope: OrderScope?
    /// 1–200; nil: 50.
    public var limit: Int?
    /// The previous page's `nextCursor`. A server without cursor paging refuses it
    /// (`invalid_field`, `cursor`).
    public var cursor: String?

    public init(role: OrderRole? = nil, scope: OrderScope? = nil, limit: Int? = nil, cursor: String? = nil) {
        self.role = role
        self.scope = scope
        self.limit = limit
        self.cursor = cursor
    }

    public var operation: String { "orders.mine" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["role"] = role?.wireValue
        object["scope"] = scope?.wireValue
        object["limit"] = limit.map { .integer(Int64($0)) }
        object["cursor"] = cursor.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> MyOrdersPage { try MyOrdersPage(wire: data, at: []) }
}

/// `runner.earnings`.
public struct GetEarnings: BangbangRequest {
    public init() {}
    public var operation: String { "runner.earnings" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Earnings { try Earnings(wire: data, at: []) }
}
