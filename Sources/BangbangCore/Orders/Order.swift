// The order record a board shard keeps, open or historical.

/// One step of an order's life, as shown in the order detail.
public struct TimelineEntry: Codable, Hashable, Sendable {
    public var status: OrderStatus
    public var at: Timestamp
    /// Who caused it; nil for transitions the clock caused (expiry, auto-confirm, quorum).
    public var actor: UserID?
    /// A cancel reason, "auto-confirmed", "quorum not reached", …
    public var note: String?

    public init(status: OrderStatus, at: Timestamp, actor: UserID?, note: String? = nil) {
        self.status = status
        self.at = at
        self.actor = actor
        self.note = note
    }
}

/// A 1–5 star rating with an optional comment, given once per side after completion.
public struct Rating: Codable, Hashable, Sendable {
    public var stars: Int
    public var comment: String
    public var at: Timestamp

    public init(stars: Int, comment: String, at: Timestamp) {
        self.stars = stars
        self.comment = comment
        self.at = at
    }
}

/// Why and how an order ended cancelled.
public struct Cancellation: Codable, Hashable, Sendable {
    public enum Cause: String, Codable, Hashable, Sendable {
        /// The publisher cancelled.
        case publisher
        /// A group order did not reach its minimum fill by its closing time.
        case quorumNotReached = "quorum_not_reached"
    }
    public var cause: Cause
    public var reason: String?
    /// Paid by the publisher to the runner (cancelled after the grace window), else 0.
    public var fee: Cents
    /// The runner who held the order when it was cancelled, if any.
    public var runner: UserID?

    public init(cause: Cause, reason: String?, fee: Cents, runner: UserID?) {
        self.cause = cause
        self.reason = reason
        self.fee = fee
        self.runner = runner
    }
}

/// An order: common fields, the per-type details and its life so far.
public struct Order: Codable, Hashable, Sendable {
    public var id: OrderID
    public var publisher: UserID
    public var campus: String
    public var createdAt: Timestamp
    public var deadline: Timestamp
    public var tip: Cents
    public var status: OrderStatus
    /// The runner holding (or who completed) a single-runner order.
    public var runner: UserID?
    /// When the current runner accepted; the cancellation grace window counts from here.
    public var acceptedAt: Timestamp?
    /// Set when delivered without a delivery code: the order completes by itself at this time.
    public var autoConfirmAt: Timestamp?
    /// Shown only to the publisher; the runner must enter it to complete the delivery.
    public var deliveryCode: String?
    public var details: OrderDetails
    /// Group orders: the holders of a share, in joining order.
    public var participants: [UserID]
    public var timeline: [TimelineEntry]
    public var cancellation: Cancellation?
    /// The publisher's rating of the runner.
    public var ratingByPublisher: Rating?
    /// The runner's rating of the publisher.
    public var ratingByRunner: Rating?
    /// Bumped by every applied event, so "did it change" is one comparison.
    public var revision: Int
    /// Lowercased public text for keyword filters: the details' text fields only (not the
    /// campus, which has a filter of its own). Computed at publish and again when an order is
    /// loaded, because orders recorded before 2026-12-01 also carry their campus here.
    public var searchText: String

    /// Every field as given (the storage decoders rebuild stored orders with it).
    public init(id: OrderID, publisher: UserID, campus: String, createdAt: Timestamp, deadline: Timestamp, tip: Cents,
                status: OrderStatus, runner: UserID?, acceptedAt: Timestamp?, autoConfirmAt: Timestamp?,
                deliveryCode: String?, details: OrderDetails, participants: [UserID], timeline: [TimelineEntry],
                cancellation: Cancellation?, ratingByPublisher: Rating?, ratingByRunner: Rating?, revision: Int,
                searchText: String) {
        self.id = id
        self.publisher = publisher
        self.campus = campus
        self.createdAt = createdAt
        self.deadline = deadline
        self.tip = tip
        self.status = status
        self.runner = runner
        self.acceptedAt = acceptedAt
        self.autoConfirmAt = autoConfirmAt
        self.deliveryCode = deliveryCode
        self.details = details
        self.participants = participants
        self.timeline = timeline
        self.cancellation = cancellation
        self.ratingByPublisher = ratingByPublisher
        self.ratingByRunner = ratingByRunner
        self.revision = revision
        self.searchText = searchText
    }

    public var type: OrderType { details.type }

    /// On the board: a runner (or participant) can still take it.
    public var isListed: Bool { status == .open }

    /// Everyone with a stake in this order: publisher, runner, participants.
    public var parties: [UserID] {
        var result = [publisher]
        if let runner { result.append(runner) }
        result += participants
        return result
    }

    /// When the order reached its terminal status (its last timeline entry: ratings add none);
    /// nil while it can still move.
    public var closedAt: Timestamp? {
        guard status.isTerminal else { return nil }
        return timeline.last(where: { $0.status.isTerminal })?.at
    }

    /// Recomputes `searchText` from the details (see there).
    public mutating func refreshSearchText() {
        searchText = details.searchText
    }

    var groupDetails: GroupDetails? {
        if case .group(let group) = details { return group }
        return nil
    }

    /// When the clock next changes this order, or nil if only a user can.
    public var nextDueTime: Timestamp? {
        switch status {
        case .open:
            return groupDetails?.closesAt ?? deadline
        case .full:
            return deadline
        case .delivered:
            return autoConfirmAt
        default:
            return nil
        }
    }
}

