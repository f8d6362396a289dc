// Error codes of the orders part. They go on the wire unchanged, so they never change once shipped.

extension ErrorCode {
    /// Accept lost the race: another runner holds the order.
    public static let orderTaken = ErrorCode("order_taken")
    /// The order is no longer on the board: cancelled, expired, completed, or its window closed.
    public static let orderClosed = ErrorCode("order_closed")
    /// Only runners whose identity check was approved may accept orders.
    public static let runnerNotVerified = ErrorCode("runner_not_verified")
    /// The caller is not the publisher / assigned runner / participant this action needs.
    public static let notYourOrder = ErrorCode("not_your_order")
    /// The order's status does not allow this action; the message names from and to.
    public static let invalidTransition = ErrorCode("invalid_transition")
    /// The delivery code given by the runner does not match the publisher's.
    public static let wrongDeliveryCode = ErrorCode("wrong_delivery_code")
    /// The group order has no free share left.
    public static let groupFull = ErrorCode("group_full")
    /// The user already holds a share of this group order.
    public static let alreadyJoined = ErrorCode("already_joined")
    /// The user holds no share of this group order.
    public static let notJoined = ErrorCode("not_joined")
    /// This side already rated the other on this order.
    public static let alreadyRated = ErrorCode("already_rated")
}

extension DomainError {
    static func invalid(_ field: String, _ message: String, minimum: Int64? = nil, maximum: Int64? = nil) -> DomainError {
        DomainError(.invalidField, message, field: field, minimum: minimum, maximum: maximum)
    }

    static func transition(_ from: OrderStatus, _ to: OrderStatus) -> DomainError {
        DomainError(.invalidTransition, "cannot go from \(from.rawValue) to \(to.rawValue)")
    }
}
