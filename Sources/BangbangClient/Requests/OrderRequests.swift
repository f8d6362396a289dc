// order.*: publishing and every step of an order's life (operations-orders.md). Every reply
// is the order after the step, as you may see it.
import JSON

/// `order.publish`.
public struct PublishOrder: BangbangRequest {
    public var draft: OrderDraft

    public init(_ draft: OrderDraft) { self.draft = draft }

    public var operation: String { "order.publish" }
    public var data: JSONValue? { draft.wireValue }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// `order.get`: any order by id, as you may see it.
public struct GetOrder: BangbangRequest {
    public var orderID: OrderID

    public init(_ orderID: OrderID) { self.orderID = orderID }

    public var operation: String { "order.get" }
    public var data: JSONValue? { ["order_id": .integer(orderID.rawValue)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// The steps that take only the order's id.
public struct OrderStep: BangbangRequest {
    public enum Step: String, Sendable, Hashable, CaseIterable {
        /// `order.accept`: take an open order (verified runners; one winner however many race).
        case accept
        /// `order.pick_up`: the runner of an express or purchase order has the goods.
        case pickUp = "pick_up"
        /// `order.start`: the runner of a bounty is working on it.
        case start
        /// `order.confirm`: the publisher received it.
        case confirm
        /// `order.abandon`: the runner gives an accepted order back to the board.
        case abandon
        /// `order.join`: take a share of a group order.
        case join
        /// `order.leave`: give the share back, before `closes_at`.
        case leave
        /// `order.complete`: the publisher of a group order: it happened.
        case complete
    }

    public var step: Step
    public var orderID: OrderID

    public init(_ step: Step, _ orderID: OrderID) {
        self.step = step
        self.orderID = orderID
    }

    public var operation: String { "order.\(step.rawValue)" }
    public var data: JSONValue? { ["order_id": .integer(orderID.rawValue)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// `order.deliver`: the runner handed it over. With the publisher's delivery code the order
/// completes at once.
public struct DeliverOrder: BangbangRequest {
    public var orderID: OrderID
    /// Required when the order has a delivery code.
    public var code: String?

    public init(_ orderID: OrderID, code: String? = nil) {
        self.orderID = orderID
        self.code = code
    }

    public var operation: String { "order.deliver" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["order_id"] = .integer(orderID.rawValue)
        object["code"] = code.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// `order.cancel`: free while open; once a runner holds it a reason is required, and after the
/// grace window the fee goes to the runner (`ServerInfo.orderRules`).
public struct CancelOrder: BangbangRequest {
    public var orderID: OrderID
    public var reason: String?

    public init(_ orderID: OrderID, reason: String? = nil) {
        self.orderID = orderID
        self.reason = reason
    }

    public var operation: String { "order.cancel" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["order_id"] = .integer(orderID.rawValue)
        object["reason"] = reason.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// `order.raise_tip` (加小费): a higher tip for an order nobody has taken.
public struct RaiseTip: BangbangRequest {
    public var orderID: OrderID
    /// The new tip in fen: above the current one.
    public var tip: Int

    public init(_ orderID: OrderID, to tip: Int) {
        self.orderID = orderID
        self.tip = tip
    }

    public var operation: String { "order.raise_tip" }
    public var data: JSONValue? { ["order_id": .integer(orderID.rawValue), "tip": .integer(Int64(tip))] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

/// `order.rate`: publisher and runner rate each other once a single-runner order is completed.
public struct RateOrder: BangbangRequest {
    public var orderID: OrderID
    /// 1–5.
    public var stars: Int
    public var comment: String?

    public init(_ orderID: OrderID, stars: Int, comment: String? = nil) {
        self.orderID = orderID
        self.stars = stars
        self.comment = comment
    }

    public var operation: String { "order.rate" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["order_id"] = .integer(orderID.rawValue)
        object["stars"] = .integer(Int64(stars))
        object["comment"] = comment.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Order { try member("order", of: data) }
}

extension BangbangRequest where Self == OrderStep {
    public static func accept(_ orderID: OrderID) -> OrderStep { OrderStep(.accept, orderID) }
    public static func pickUp(_ orderID: OrderID) -> OrderStep { OrderStep(.pickUp, orderID) }
    public static func start(_ orderID: OrderID) -> OrderStep { OrderStep(.start, orderID) }
    public static func confirm(_ orderID: OrderID) -> OrderStep { OrderStep(.confirm, orderID) }
    public static func abandon(_ orderID: OrderID) -> OrderStep { OrderStep(.abandon, orderID) }
    public static func join(_ orderID: OrderID) -> OrderStep { OrderStep(.join, orderID) }
    public static func leave(_ orderID: OrderID) -> OrderStep { OrderStep(.leave, orderID) }
    public static func complete(_ orderID: OrderID) -> OrderStep { OrderStep(.complete, orderID) }
}

extension BangbangRequest where Self == PublishOrder {
    public static func publish(_ draft: OrderDraft) -> PublishOrder { PublishOrder(draft) }
}

extension BangbangRequest where Self == DeliverOrder {
    public static func deliver(_ orderID: OrderID, code: String? = nil) -> DeliverOrder { DeliverOrder(orderID, code: code) }
}
