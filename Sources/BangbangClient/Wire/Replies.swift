// Reply objects that are not orders or account objects: what `info.get`, `auth.request_code`,
// the logins, the listings, `board.stats` and `runner.earnings` answer.
import JSON

/// `info.get`: what the app shows before login.
public struct ServerInfo: Sendable, Hashable, WireDecodable {
    public var version: String
    /// For the "call support" button.
    public var supportPhone: String?
    /// The campuses served; empty: any campus name is accepted.
    public var campuses: [String]
    public var orderTypes: [OrderType]
    public var limits: ServerLimits
    /// The cancel and auto-confirm rules, for wording the cancel dialog. nil from a server that
    /// does not say (older than the `order_rules` member): then the documented defaults apply,
    /// `OrderRules.documentedDefaults`.
    public var orderRules: OrderRules?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        version = try object.required("version")
        supportPhone = try object.optional("support_phone")
        campuses = try object.required("campuses")
        orderTypes = try object.required("order_types")
        limits = try object.required("limits")
        orderRules = try object.optional("order_rules")
        object.finish()
    }
}

public struct ServerLimits: Sendable, Hashable, WireDecodable {
    /// The largest request, in bytes.
    public var maxMessageBytes: Int
    /// Fen.
    public var maxTip: Int
    /// Fen.
    public var maxGoodsBudget: Int
    public var passwordMinLength: Int
    public var passwordMaxLength: Int
    public var nicknameMaxLength: Int
    public var feedbackMaxLength: Int

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        maxMessageBytes = try object.required("max_message_bytes")
        maxTip = try object.required("max_tip")
        maxGoodsBudget = try object.required("max_goods_budget")
        passwordMinLength = try object.required("password_min_length")
        passwordMaxLength = try object.required("password_max_length")
        nicknameMaxLength = try object.required("nickname_max_length")
        feedbackMaxLength = try object.required("feedback_max_length")
        object.finish()
    }
}

/// How cancelling and auto-confirming work on this server (protocol/orders.md, "Cancellation").
public struct OrderRules: Sendable, Hashable, WireDecodable {
    /// After acceptance, a cancel within this window is free.
    public var cancelGrace: Duration
    /// Fen a publisher pays the runner for a cancel after the grace window.
    public var cancelFee: Int
    /// A delivered order completes by itself this long after delivery.
    public var autoConfirmDelay: Duration

    public init(cancelGrace: Duration, cancelFee: Int, autoConfirmDelay: Duration) {
        self.cancelGrace = cancelGrace
        self.cancelFee = cancelFee
        self.autoConfirmDelay = autoConfirmDelay
    }

    /// The defaults protocol/orders.md documents: 2 minutes, ¥2, 24 hours.
    public static let documentedDefaults = OrderRules(cancelGrace: .seconds(120), cancelFee: 200,
                                                      autoConfirmDelay: .seconds(24 * 3600))

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        cancelGrace = .protocolMilliseconds(try object.required("cancel_grace_ms"))
        cancelFee = try object.required("cancel_fee")
        autoConfirmDelay = .protocolMilliseconds(try object.required("auto_confirm_ms"))
        object.finish()
    }
}

/// `auth.request_code`: the code is on its way.
public struct CodeRequestResult: Sendable, Hashable, WireDecodable {
    /// The phone, normalized to E.164.
    public var phone: String
    /// When the code stops working.
    public var expiresAt: Timestamp
    /// How long before another code may be sent to this phone.
    public var retryAfter: Duration
    /// Development servers only (`--dev`): the code itself. Never present in production.
    public var developmentCode: String?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        phone = try object.required("phone")
        expiresAt = try object.required("expires_at")
        retryAfter = .seconds(try object.required("retry_after", as: Int64.self))
        developmentCode = try object.optional("dev_code")
        object.finish()
    }
}

/// A successful login (code or password). The token is kept by the connection's session store.
public struct LoginResult: Sendable, Hashable, WireDecodable {
    public var user: User
    /// True when this login registered the account.
    public var isNew: Bool
    let token: String
    /// The personal stream's position at login: live events follow it.
    let seq: Int64

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        token = try object.required("token")
        user = try object.required("user")
        isNew = try object.required("is_new")
        seq = try object.required("seq")
        object.finish()
    }
}

/// The reply to `auth.resume` (read by the connection itself, which resumes for the app).
struct ResumeResult: Sendable, Hashable, WireDecodable {
    var user: User
    var seq: Int64
    /// Always present per the protocol decisions; a server that leaves it out means false.
    var resync: Bool

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        user = try object.required("user")
        seq = try object.required("seq")
        resync = try object.optional("resync") ?? false
        object.finish()
    }
}

/// One page of `board.list`.
public struct BoardPage: Sendable, Hashable, WireDecodable {
    public var orders: [Order]
    /// Every open order matching the filter.
    public var total: Int
    /// Pass to the next `ListBoard` for the following page; nil on the last one.
    public var nextCursor: String?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        orders = try object.required("orders")
        total = try object.required("total")
        nextCursor = try object.optional("next_cursor")
        object.finish()
    }
}

/// The reply to `board.subscribe`: the list at the moment of subscribing, and each board's feed
/// position then (events at or below it are already in the list).
public struct BoardSnapshot: Sendable, Hashable, WireDecodable {
    public var orders: [Order]
    public var total: Int
    public var seq: [OrderType: Int64]

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        orders = try object.required("orders")
        total = try object.required("total")
        var positions = try WireObject(object.raw("seq") ?? .null, at: path.appending(.key("seq")))
        var seq: [OrderType: Int64] = [:]
        for type in OrderType.allCases {
            if let position: Int64 = try positions.optional(type.rawValue) { seq[type] = position }
        }
        positions.finish()
        self.seq = seq
        object.finish()
    }

    init(orders: [Order], total: Int, seq: [OrderType: Int64]) {
        self.orders = orders
        self.total = total
        self.seq = seq
    }
}

/// One page of `orders.mine`.
public struct MyOrdersPage: Sendable, Hashable, WireDecodable {
    public var orders: [Order]
    /// Pass to the next `MyOrders` for older orders; nil on the last page, and always nil from
    /// a server without cursor paging.
    public var nextCursor: String?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        orders = try object.required("orders")
        nextCursor = try object.optional("next_cursor")
        object.finish()
    }
}

/// One page of `admin.list_feedback`, newest first.
public struct FeedbackPage: Sendable, Hashable, WireDecodable {
    public var feedback: [Feedback]
    /// Pass as `before` for the next page; nil on the last one.
    public var nextBefore: Int64?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        feedback = try object.required("feedback")
        nextBefore = try object.optional("next_before")
        object.finish()
    }
}

/// `board.stats`: per type, open orders and the runners watching now.
public struct BoardStatistics: Sendable, Hashable, WireDecodable {
    public struct Board: Sendable, Hashable, WireDecodable {
        public var open: Int
        /// Approved runners subscribed to this type now, counted once however many devices watch.
        public var runnersOnline: Int

        init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
            var object = try WireObject(value, at: path)
            open = try object.required("open")
            runnersOnline = try object.required("runners_online")
            object.finish()
        }
    }

    public var boards: [OrderType: Board]

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        var types = try WireObject(object.raw("types") ?? .null, at: path.appending(.key("types")))
        var boards: [OrderType: Board] = [:]
        for type in OrderType.allCases {
            boards[type] = try types.required(type.rawValue)
        }
        types.finish()
        self.boards = boards
        object.finish()
    }
}

/// `admin.stats`: numbers of a moment, for an operator's overview.
public struct AdminStatistics: Sendable, Hashable, WireDecodable {
    public struct Board: Sendable, Hashable, WireDecodable {
        public var open: Int
        public var runnersOnline: Int
        public var publishedLastMinute: Int

        init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
            var object = try WireObject(value, at: path)
            open = try object.required("open")
            runnersOnline = try object.required("runners_online")
            publishedLastMinute = try object.required("published_last_minute")
            object.finish()
        }
    }

    /// Open connections, WebSocket and plain HTTP.
    public var connections: Int
    /// Users with at least one logged-in connection.
    public var usersOnline: Int
    public var pendingVerifications: Int
    /// Orders published in the last 60 seconds, all types.
    public var publishedLastMinute: Int
    public var boards: [OrderType: Board]

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        connections = try object.required("connections")
        usersOnline = try object.required("users_online")
        pendingVerifications = try object.required("pending_verifications")
        publishedLastMinute = try object.required("published_last_minute")
        var types = try WireObject(object.raw("types") ?? .null, at: path.appending(.key("types")))
        var boards: [OrderType: Board] = [:]
        for type in OrderType.allCases {
            boards[type] = try types.required(type.rawValue)
        }
        types.finish()
        self.boards = boards
        object.finish()
    }
}

/// `runner.earnings`. Money in fen.
public struct Earnings: Sendable, Hashable, WireDecodable {
    public var completedCount: Int
    public var tips: Int
    public var cancellationFees: Int
    public var total: Int
    /// Orders held now (accepted … delivered).
    public var activeCount: Int
    public var ratingCount: Int
    /// Summed; the average is `ratingStars / ratingCount`.
    public var ratingStars: Int

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        completedCount = try object.required("completed_count")
        tips = try object.required("tips")
        cancellationFees = try object.required("cancellation_fees")
        total = try object.required("total")
        activeCount = try object.required("active_count")
        ratingCount = try object.required("rating_count")
        ratingStars = try object.required("rating_stars")
        object.finish()
    }
}
