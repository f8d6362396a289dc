// admin.*: for administrators (operations-accounts.md, "Administration"); everyone else is
// answered `forbidden`.
import JSON

/// `admin.pending_verifications`: applicants waiting, oldest application first.
public struct PendingVerifications: BangbangRequest {
    public init() {}
    public var operation: String { "admin.pending_verifications" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> [User] { try member("users", of: data) }
}

/// `admin.decide_verification`.
public struct DecideVerification: BangbangRequest {
    public enum Decision: Sendable, Hashable {
        case approve
        /// The applicant reads the reason (1–200 characters).
        case reject(reason: String)
    }

    public var userID: UserID
    public var decision: Decision

    public init(userID: UserID, decision: Decision) {
        self.userID = userID
        self.decision = decision
    }

    public var operation: String { "admin.decide_verification" }
    public var data: JSONValue? {
        switch decision {
        case .approve: ["user_id": .integer(userID.rawValue), "decision": "approve"]
        case .reject(let reason): ["user_id": .integer(userID.rawValue), "decision": "reject", "reason": .string(reason)]
        }
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `admin.list_feedback`: newest first.
public struct ListFeedback: BangbangRequest {
    /// Only entries with a smaller id: the previous page's `nextBefore`.
    public var before: Int64?
    /// 1–100; nil: the server's default, 20.
    public var limit: Int?

    public init(before: Int64? = nil, limit: Int? = nil) {
        self.before = before
        self.limit = limit
    }

    public var operation: String { "admin.list_feedback" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["before"] = before.map(JSONValue.integer)
        object["limit"] = limit.map { .integer(Int64($0)) }
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> FeedbackPage { try FeedbackPage(wire: data, at: []) }
}

/// `admin.grant_admin`.
public struct GrantAdministrator: BangbangRequest {
    public var userID: UserID

    public init(userID: UserID) { self.userID = userID }

    public var operation: String { "admin.grant_admin" }
    public var data: JSONValue? { ["user_id": .integer(userID.rawValue)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `admin.revoke_admin`: administrators by `--admin-phone` cannot be revoked here.
public struct RevokeAdministrator: BangbangRequest {
    public var userID: UserID

    public init(userID: UserID) { self.userID = userID }

    public var operation: String { "admin.revoke_admin" }
    public var data: JSONValue? { ["user_id": .integer(userID.rawValue)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `admin.user`: a user in full, by id or by phone.
public struct LookUpUser: BangbangRequest {
    public enum Key: Sendable, Hashable {
        case id(UserID)
        case phone(String)
    }

    public var key: Key

    public init(_ key: Key) { self.key = key }

    public var operation: String { "admin.user" }
    public var data: JSONValue? {
        switch key {
        case .id(let id): ["user_id": .integer(id.rawValue)]
        case .phone(let phone): ["phone": .string(phone)]
        }
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `admin.order`: an order as its publisher sees it, for support calls.
public struct LookUpOrder: BangbangRequest {
    public var orderID: OrderID

    public init(orderID: OrderID) { self.orderID = orderID }

    public var operation: String { "admin.order" }
    public var data: JSONValue? { ["order_id": .integer(orderID.rawValue)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// `admin.stats`: the operator's overview of this moment.
public struct GetAdminStatistics: BangbangRequest {
    public init() {}
    public var operation: String { "admin.stats" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> AdminStatistics {
        try AdminStatistics(wire: data, at: [])
    }
}
