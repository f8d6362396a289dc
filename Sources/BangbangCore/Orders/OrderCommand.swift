// What a user asks of an existing order.

/// A user's request on one order, decided by `BoardShard.decide(_:on:by:now:rules:)`.
public enum OrderCommand: Codable, Hashable, Sendable {
    /// Take a single-runner order. The caller looks up whether the actor is an approved runner.
    case accept(isVerifiedRunner: Bool)
    /// Runner: express / purchase, accepted → picked_up.
    case pickUp
    /// Runner: bounty, accepted → in_progress.
    case start
    /// Runner: picked_up (express, purchase) or accepted / in_progress (bounty) → delivered. On
    /// an order with a delivery code the runner must give it, and the order goes straight to
    /// completed: the code proves the hand-over, so there is nothing left to confirm.
    case deliver(code: String?)
    /// Publisher: delivered → completed.
    case confirm
    /// Runner: give an accepted order back; it returns to the board.
    case abandon
    /// Publisher: cancel. A reason is required once a runner holds the order.
    case cancel(reason: String?)
    /// Publisher: raise the tip of an open order; each bump must exceed the current tip.
    case raiseTip(to: Cents)
    /// Take a share of a group order.
    case join
    /// Give a share of a group order back, before its closing time.
    case leave
    /// Publisher: end a group order as done (when full, or after its closing time).
    case complete
    /// Either party of a completed single-runner order rates the other, once.
    case rate(stars: Int, comment: String)
}
