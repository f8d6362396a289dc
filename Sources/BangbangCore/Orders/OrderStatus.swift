// The statuses an order moves through (product brief, "Order lifecycle").

/// Where an order is in its life. Raw values are the wire names.
public enum OrderStatus: String, CaseIterable, Codable, Hashable, Sendable {
    /// On the board, waiting for a runner (or, for a group, for participants).
    case open
    /// A group order whose shares are all taken; back to `open` when someone leaves.
    case full
    /// A runner holds it.
    case accepted
    /// Express / purchase: the runner has the parcel or the goods.
    case pickedUp = "picked_up"
    /// Bounty: the runner is working on it (bounties have nothing to pick up).
    case inProgress = "in_progress"
    /// The runner says it is handed over; the publisher confirms or it auto-confirms.
    case delivered
    case completed
    case cancelled
    /// The deadline passed while nobody had taken it.
    case expired

    /// No further transition leaves a terminal status.
    public var isTerminal: Bool {
        switch self {
        case .completed, .cancelled, .expired: true
        default: false
        }
    }

    /// A runner holds the order and has not yet handed it over.
    public var isRunning: Bool {
        switch self {
        case .accepted, .pickedUp, .inProgress: true
        default: false
        }
    }
}
