// What `order.publish` sends: one factory per order type, so a draft cannot carry what its type
// refuses (a group order has no runner, hence no tip and no delivery code).
import JSON

/// A new order, ready for `PublishOrder`.
public struct OrderDraft: Sendable, Hashable {
    public private(set) var campus: String
    public private(set) var deadline: Timestamp
    /// Fen for the runner; always 0 for a group order.
    public private(set) var tip: Int
    /// Ask the server to draw a 4-digit delivery code (收货码); never for a group order.
    public private(set) var requestsDeliveryCode: Bool
    public private(set) var details: OrderDetails

    private init(campus: String, deadline: Timestamp, tip: Int, requestsDeliveryCode: Bool, details: OrderDetails) {
        self.campus = campus
        self.deadline = deadline
        self.tip = tip
        self.requestsDeliveryCode = requestsDeliveryCode
        self.details = details
    }

    public static func express(_ details: ExpressDetails, campus: String, deadline: Timestamp, tip: Int,
                               requestsDeliveryCode: Bool = false) -> OrderDraft {
        OrderDraft(campus: campus, deadline: deadline, tip: tip, requestsDeliveryCode: requestsDeliveryCode,
                   details: .express(details))
    }

    public static func purchase(_ details: PurchaseDetails, campus: String, deadline: Timestamp, tip: Int,
                                requestsDeliveryCode: Bool = false) -> OrderDraft {
        OrderDraft(campus: campus, deadline: deadline, tip: tip, requestsDeliveryCode: requestsDeliveryCode,
                   details: .purchase(details))
    }

    public static func bounty(_ details: BountyDetails, campus: String, deadline: Timestamp, tip: Int,
                              requestsDeliveryCode: Bool = false) -> OrderDraft {
        OrderDraft(campus: campus, deadline: deadline, tip: tip, requestsDeliveryCode: requestsDeliveryCode,
                   details: .bounty(details))
    }

    /// A group order: `deadline` is when it completes; `details.closesAt` (not after it) is when
    /// joining stops.
    public static func group(_ details: GroupDetails, campus: String, deadline: Timestamp) -> OrderDraft {
        OrderDraft(campus: campus, deadline: deadline, tip: 0, requestsDeliveryCode: false, details: .group(details))
    }

    public var type: OrderType { details.type }

    var wireValue: JSONValue {
        var object = WireObjectBuilder()
        object["type"] = type.wireValue
        object["campus"] = .string(campus)
        object["deadline"] = deadline.wireValue
        if type != .group { object["tip"] = .integer(Int64(tip)) }
        if requestsDeliveryCode { object["delivery_code"] = .bool(true) }
        object["details"] = details.wireValue
        return object.value
    }
}
