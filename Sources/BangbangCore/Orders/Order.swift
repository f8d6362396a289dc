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
///
/// A value with one reference inside: the fields live in a storage object that copies share
/// until one of them changes (copy-on-write), so an order is as cheap to copy, capture and
/// store as a pointer. Orders are copied at every step of a change (the state before and
/// after, the event that publishes one, what the owner hands to the publisher and the
/// archive); held inline, each copy moved a few hundred bytes and retained every string and
/// array in them, and every closure that captured a change was a large allocation.
public struct Order: Sendable {
    /// The fields. Written only through `uniqueStorage()`, so never while another order (on
    /// another queue) shares it. Every access to them is nested in an access to the `Order`
    /// holding the storage, which Swift's exclusivity rules already check, so the fields skip
    /// the runtime's second check (it was a few percent of a publish).
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline @exclusivity(unchecked) var id: OrderID
        @usableFromInline @exclusivity(unchecked) var publisher: UserID
        @usableFromInline @exclusivity(unchecked) var campus: String
        @usableFromInline @exclusivity(unchecked) var createdAt: Timestamp
        @usableFromInline @exclusivity(unchecked) var deadline: Timestamp
        @usableFromInline @exclusivity(unchecked) var tip: Cents
        @usableFromInline @exclusivity(unchecked) var status: OrderStatus
        @usableFromInline @exclusivity(unchecked) var runner: UserID?
        @usableFromInline @exclusivity(unchecked) var acceptedAt: Timestamp?
        @usableFromInline @exclusivity(unchecked) var autoConfirmAt: Timestamp?
        @usableFromInline @exclusivity(unchecked) var deliveryCode: String?
        @usableFromInline @exclusivity(unchecked) var details: OrderDetails
        @usableFromInline @exclusivity(unchecked) var participants: [UserID]
        @usableFromInline @exclusivity(unchecked) var timeline: [TimelineEntry]
        @usableFromInline @exclusivity(unchecked) var cancellation: Cancellation?
        @usableFromInline @exclusivity(unchecked) var ratingByPublisher: Rating?
        @usableFromInline @exclusivity(unchecked) var ratingByRunner: Rating?
        @usableFromInline @exclusivity(unchecked) var revision: Int
        @usableFromInline @exclusivity(unchecked) var searchText: String

        @usableFromInline
        init(id: OrderID, publisher: UserID, campus: String, createdAt: Timestamp, deadline: Timestamp, tip: Cents,
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

        @usableFromInline
        func copy() -> Storage {
            Storage(id: id, publisher: publisher, campus: campus, createdAt: createdAt, deadline: deadline, tip: tip,
                    status: status, runner: runner, acceptedAt: acceptedAt, autoConfirmAt: autoConfirmAt,
                    deliveryCode: deliveryCode, details: details, participants: participants, timeline: timeline,
                    cancellation: cancellation, ratingByPublisher: ratingByPublisher, ratingByRunner: ratingByRunner,
                    revision: revision, searchText: searchText)
        }
    }

    @usableFromInline var storage: Storage

    /// The storage, copied first if another order shares it. Call before writing a field.
    @inlinable
    mutating func uniqueStorage() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    @inlinable public var id: OrderID {
        get { storage.id }
        set { uniqueStorage().id = newValue }
        _modify { yield &uniqueStorage().id }
    }

    @inlinable public var publisher: UserID {
        get { storage.publisher }
        set { uniqueStorage().publisher = newValue }
        _modify { yield &uniqueStorage().publisher }
    }

    @inlinable public var campus: String {
        get { storage.campus }
        set { uniqueStorage().campus = newValue }
        _modify { yield &uniqueStorage().campus }
    }

    @inlinable public var createdAt: Timestamp {
        get { storage.createdAt }
        set { uniqueStorage().createdAt = newValue }
        _modify { yield &uniqueStorage().createdAt }
    }

    @inlinable public var deadline: Timestamp {
        get { storage.deadline }
        set { uniqueStorage().deadline = newValue }
        _modify { yield &uniqueStorage().deadline }
    }

    @inlinable public var tip: Cents {
        get { storage.tip }
        set { uniqueStorage().tip = newValue }
        _modify { yield &uniqueStorage().tip }
    }

    @inlinable public var status: OrderStatus {
        get { storage.status }
        set { uniqueStorage().status = newValue }
        _modify { yield &uniqueStorage().status }
    }

    /// The runner holding (or who completed) a single-runner order.
    @inlinable public var runner: UserID? {
        get { storage.runner }
        set { uniqueStorage().runner = newValue }
        _modify { yield &uniqueStorage().runner }
    }

    /// When the current runner accepted; the cancellation grace window counts from here.
    @inlinable public var acceptedAt: Timestamp? {
        get { storage.acceptedAt }
        set { uniqueStorage().acceptedAt = newValue }
        _modify { yield &uniqueStorage().acceptedAt }
    }

    /// Set when delivered without a delivery code: the order completes by itself at this time.
    @inlinable public var autoConfirmAt: Timestamp? {
        get { storage.autoConfirmAt }
        set { uniqueStorage().autoConfirmAt = newValue }
        _modify { yield &uniqueStorage().autoConfirmAt }
    }

    /// Shown only to the publisher; the runner must enter it to complete the delivery.
    @inlinable public var deliveryCode: String? {
        get { storage.deliveryCode }
        set { uniqueStorage().deliveryCode = newValue }
        _modify { yield &uniqueStorage().deliveryCode }
    }

    @inlinable public var details: OrderDetails {
        get { storage.details }
        set { uniqueStorage().details = newValue }
        _modify { yield &uniqueStorage().details }
    }

    /// Group orders: the holders of a share, in joining order.
    @inlinable public var participants: [UserID] {
        get { storage.participants }
        set { uniqueStorage().participants = newValue }
        _modify { yield &uniqueStorage().participants }
    }

    @inlinable public var timeline: [TimelineEntry] {
        get { storage.timeline }
        set { uniqueStorage().timeline = newValue }
        _modify { yield &uniqueStorage().timeline }
    }

    @inlinable public var cancellation: Cancellation? {
        get { storage.cancellation }
        set { uniqueStorage().cancellation = newValue }
        _modify { yield &uniqueStorage().cancellation }
    }

    /// The publisher's rating of the runner.
    @inlinable public var ratingByPublisher: Rating? {
        get { storage.ratingByPublisher }
        set { uniqueStorage().ratingByPublisher = newValue }
        _modify { yield &uniqueStorage().ratingByPublisher }
    }

    /// The runner's rating of the publisher.
    @inlinable public var ratingByRunner: Rating? {
        get { storage.ratingByRunner }
        set { uniqueStorage().ratingByRunner = newValue }
        _modify { yield &uniqueStorage().ratingByRunner }
    }

    /// Bumped by every applied event, so "did it change" is one comparison.
    @inlinable public var revision: Int {
        get { storage.revision }
        set { uniqueStorage().revision = newValue }
        _modify { yield &uniqueStorage().revision }
    }

    /// Lowercased public text for keyword filters: the details' text fields only (not the
    /// campus, which has a filter of its own). Computed at publish and again when an order is
    /// loaded, because orders recorded before 2026-12-01 also carry their campus here.
    @inlinable public var searchText: String {
        get { storage.searchText }
        set { uniqueStorage().searchText = newValue }
        _modify { yield &uniqueStorage().searchText }
    }

    /// Every field as given (the storage decoders rebuild stored orders with it).
    public init(id: OrderID, publisher: UserID, campus: String, createdAt: Timestamp, deadline: Timestamp, tip: Cents,
                status: OrderStatus, runner: UserID?, acceptedAt: Timestamp?, autoConfirmAt: Timestamp?,
                deliveryCode: String?, details: OrderDetails, participants: [UserID], timeline: [TimelineEntry],
                cancellation: Cancellation?, ratingByPublisher: Rating?, ratingByRunner: Rating?, revision: Int,
                searchText: String) {
        storage = Storage(id: id, publisher: publisher, campus: campus, createdAt: createdAt, deadline: deadline,
                          tip: tip, status: status, runner: runner, acceptedAt: acceptedAt,
                          autoConfirmAt: autoConfirmAt, deliveryCode: deliveryCode, details: details,
                          participants: participants, timeline: timeline, cancellation: cancellation,
                          ratingByPublisher: ratingByPublisher, ratingByRunner: ratingByRunner,
                          revision: revision, searchText: searchText)
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

extension Order: Equatable {
    public static func == (lhs: Order, rhs: Order) -> Bool {
        if lhs.storage === rhs.storage { return true }
        return lhs.id == rhs.id
            && lhs.publisher == rhs.publisher
            && lhs.campus == rhs.campus
            && lhs.createdAt == rhs.createdAt
            && lhs.deadline == rhs.deadline
            && lhs.tip == rhs.tip
            && lhs.status == rhs.status
            && lhs.runner == rhs.runner
            && lhs.acceptedAt == rhs.acceptedAt
            && lhs.autoConfirmAt == rhs.autoConfirmAt
            && lhs.deliveryCode == rhs.deliveryCode
            && lhs.details == rhs.details
            && lhs.participants == rhs.participants
            && lhs.timeline == rhs.timeline
            && lhs.cancellation == rhs.cancellation
            && lhs.ratingByPublisher == rhs.ratingByPublisher
            && lhs.ratingByRunner == rhs.ratingByRunner
            && lhs.revision == rhs.revision
            && lhs.searchText == rhs.searchText
    }
}

extension Order: Hashable {
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(publisher)
        hasher.combine(campus)
        hasher.combine(createdAt)
        hasher.combine(deadline)
        hasher.combine(tip)
        hasher.combine(status)
        hasher.combine(runner)
        hasher.combine(acceptedAt)
        hasher.combine(autoConfirmAt)
        hasher.combine(deliveryCode)
        hasher.combine(details)
        hasher.combine(participants)
        hasher.combine(timeline)
        hasher.combine(cancellation)
        hasher.combine(ratingByPublisher)
        hasher.combine(ratingByRunner)
        hasher.combine(revision)
        hasher.combine(searchText)
    }
}

/// The keys and the form the synthesized conformance had while the fields were stored in the
/// struct itself: every stored record and snapshot was written with it.
extension Order: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, publisher, campus, createdAt, deadline, tip, status, runner, acceptedAt, autoConfirmAt, deliveryCode
        case details, participants, timeline, cancellation, ratingByPublisher, ratingByRunner, revision, searchText
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(OrderID.self, forKey: .id),
            publisher: try container.decode(UserID.self, forKey: .publisher),
            campus: try container.decode(String.self, forKey: .campus),
            createdAt: try container.decode(Timestamp.self, forKey: .createdAt),
            deadline: try container.decode(Timestamp.self, forKey: .deadline),
            tip: try container.decode(Cents.self, forKey: .tip),
            status: try container.decode(OrderStatus.self, forKey: .status),
            runner: try container.decodeIfPresent(UserID.self, forKey: .runner),
            acceptedAt: try container.decodeIfPresent(Timestamp.self, forKey: .acceptedAt),
            autoConfirmAt: try container.decodeIfPresent(Timestamp.self, forKey: .autoConfirmAt),
            deliveryCode: try container.decodeIfPresent(String.self, forKey: .deliveryCode),
            details: try container.decode(OrderDetails.self, forKey: .details),
            participants: try container.decode([UserID].self, forKey: .participants),
            timeline: try container.decode([TimelineEntry].self, forKey: .timeline),
            cancellation: try container.decodeIfPresent(Cancellation.self, forKey: .cancellation),
            ratingByPublisher: try container.decodeIfPresent(Rating.self, forKey: .ratingByPublisher),
            ratingByRunner: try container.decodeIfPresent(Rating.self, forKey: .ratingByRunner),
            revision: try container.decode(Int.self, forKey: .revision),
            searchText: try container.decode(String.self, forKey: .searchText))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(publisher, forKey: .publisher)
        try container.encode(campus, forKey: .campus)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(deadline, forKey: .deadline)
        try container.encode(tip, forKey: .tip)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(runner, forKey: .runner)
        try container.encodeIfPresent(acceptedAt, forKey: .acceptedAt)
        try container.encodeIfPresent(autoConfirmAt, forKey: .autoConfirmAt)
        try container.encodeIfPresent(deliveryCode, forKey: .deliveryCode)
        try container.encode(details, forKey: .details)
        try container.encode(participants, forKey: .participants)
        try container.encode(timeline, forKey: .timeline)
        try container.encodeIfPresent(cancellation, forKey: .cancellation)
        try container.encodeIfPresent(ratingByPublisher, forKey: .ratingByPublisher)
        try container.encodeIfPresent(ratingByRunner, forKey: .ratingByRunner)
        try container.encode(revision, forKey: .revision)
        try container.encode(searchText, forKey: .searchText)
    }
}
