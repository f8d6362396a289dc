// The protocol's string enumerations (protocol/orders.md, operations-*.md), one Swift enum each,
// raw values exactly as on the wire.

/// The four kinds of order, each with its own board.
public enum OrderType: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    /// 代取快递: pick up a parcel.
    case express
    /// 代购配送: buy and deliver.
    case purchase
    /// 悬赏任务: a task for a reward.
    case bounty
    /// 拼车拼团: carpool or group buy; no runner.
    case group
}

/// Where an order is in its life (protocol/orders.md, "The state machine").
public enum OrderStatus: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case open, full, accepted
    case pickedUp = "picked_up"
    case inProgress = "in_progress"
    case delivered, completed, cancelled, expired

    /// `completed`, `cancelled` and `expired` never change again.
    public var isFinal: Bool { self == .completed || self == .cancelled || self == .expired }
}

/// What an `order.changed` event reports (protocol/events.md).
public enum OrderChange: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case published, accepted
    case pickedUp = "picked_up"
    case inProgress = "in_progress"
    case delivered, confirmed
    case autoConfirmed = "auto_confirmed"
    case abandoned, cancelled, expired
    case tipRaised = "tip_raised"
    case joined, left
    case closedForJoining = "closed_for_joining"
    case completed, rated
}

public enum ParcelSize: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case small, medium, large
}

public enum GroupKind: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case carpool
    case groupBuy = "group_buy"
}

public enum CancellationCause: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    /// The publisher cancelled.
    case publisher
    /// A group order reached `closes_at` below its `minimum_fill`.
    case quorumNotReached = "quorum_not_reached"
}

public enum Gender: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case male, female, undisclosed
}

public enum VerificationStatus: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case pending, approved, rejected
}

/// How a device logged in, as `account.login` tells the user's other devices.
public enum LoginMethod: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    case code, password
}

/// The order of a board listing.
public enum BoardSort: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    /// `created_at`, latest first (the default).
    case newest
    /// Highest tip first.
    case tip
    /// Soonest deadline first.
    case deadline
}

/// Which of my orders `orders.mine` lists.
public enum OrderRole: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    /// Orders I posted (the default).
    case published
    /// Orders I run or ran, including ones cancelled while I held them.
    case accepted
    /// Group orders I hold a share of.
    case joined
}

/// Which part of my orders' lives `orders.mine` lists.
public enum OrderScope: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    /// Still moving.
    case active
    /// `completed`, `cancelled`, `expired`.
    case history
    /// Both (the default).
    case all
}

/// What an SMS code is for.
public enum CodePurpose: String, Sendable, Hashable, CaseIterable, WireEnumeration {
    /// Logging in (the default).
    case login
    /// The new phone of `profile.change_phone`.
    case changePhone = "change_phone"
}
