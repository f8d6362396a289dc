// Events of the orders part: the only way a board shard changes, and what the journal stores.

/// What happened to one order. Everything `apply` needs is here (a fee, an auto-confirm time,
/// a generated delivery code), so replay never consults configuration or randomness.
public enum OrderChange: Codable, Hashable, Sendable {
    /// A new order, complete with its freshly allocated id.
    case published(Order)
    case accepted(runner: UserID)
    /// picked_up (express, purchase) or in_progress (bounty).
    case progressed(to: OrderStatus)
    /// The runner handed it over. With a delivery code the order completes at once (the code
    /// is the publisher's confirmation); without, it waits for confirmation until `autoConfirmAt`.
    case delivered(autoConfirmAt: Timestamp?)
    /// delivered → completed, by the publisher or, when `automatic`, by the clock.
    case confirmed(automatic: Bool)
    /// The runner gave the order back; it is on the board again.
    case abandoned(runner: UserID)
    case cancelled(Cancellation)
    case expired
    case tipRaised(to: Cents)
    case joined(UserID)
    case left(UserID)
    /// A group order reached its closing time with enough participants: it becomes `full`
    /// (no more joining or leaving) until it completes at its deadline.
    case closedForJoining
    /// A group order ended as planned (by the publisher, or by the clock at its deadline).
    case groupCompleted(automatic: Bool)
    /// `byPublisher`: the publisher rated the runner; else the runner rated the publisher.
    case rated(byPublisher: Bool, Rating)
    /// The order is closed, past its rating window and stored in the archive at its current
    /// revision: it leaves the shard's memory. Internal: nobody is told, the board does not move.
    case movedToArchive
}

/// One journaled change of one order.
public struct OrderEvent: Codable, Hashable, Sendable {
    public var orderID: OrderID
    public var at: Timestamp
    /// The user who caused it; nil when the clock did.
    public var actor: UserID?
    public var change: OrderChange
    /// Everyone to push this to: the parties of the order before and after the change (so a
    /// runner who abandoned, or a participant who left, is told too). Deduplicated, sorted.
    public var notify: [UserID]

    public init(orderID: OrderID, at: Timestamp, actor: UserID?, change: OrderChange, notify: [UserID]) {
        self.orderID = orderID
        self.at = at
        self.actor = actor
        self.change = change
        self.notify = notify
    }
}

/// What applying an event did, for the server to build pushes: the order before (nil for a
/// publish) and after. Build per-viewer payloads with `OrderView(order, viewer:)`, and feed
/// deltas with `FeedFilter.change(before:after:)`.
public struct AppliedOrderChange: Sendable {
    public var event: OrderEvent
    public var before: Order?
    public var after: Order
}
