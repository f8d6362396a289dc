// The order object (protocol/orders.md, "The order object") as one viewer sees it: what the
// viewer may not see is nil, never a placeholder.
import JSON

public struct Order: Sendable, Hashable, Identifiable, WireDecodable {
    public var id: OrderID
    public var status: OrderStatus
    public var publisher: UserID
    /// The runner while one holds it, and after it ended in their hands.
    public var runner: UserID?
    public var campus: String
    public var createdAt: Timestamp
    /// An open order expires then; a group order completes then.
    public var deadline: Timestamp
    /// Fen the runner earns; 0 for group orders.
    public var tip: Int
    public var details: OrderDetails
    /// Publisher only, when asked for at publish time: four digits the runner must give
    /// `order.deliver`.
    public var deliveryCode: String?
    /// Group orders: shares taken. nil for the other types.
    public var participantCount: Int?
    /// Group orders: the participants, for the publisher and participants only, when not empty.
    public var participants: [UserID]?
    /// Every step, oldest first.
    public var timeline: [TimelineEntry]
    /// While `delivered`: when it completes by itself.
    public var autoConfirmAt: Timestamp?
    public var cancellation: Cancellation?
    public var ratingByPublisher: Rating?
    public var ratingByRunner: Rating?
    /// 1 at publish, +1 per change: of two copies of an order, the higher revision is newer.
    public var revision: Int64

    public var type: OrderType { details.type }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        id = try object.required("id")
        let type: OrderType = try object.required("type")
        status = try object.required("status")
        publisher = try object.required("publisher")
        runner = try object.optional("runner")
        campus = try object.required("campus")
        createdAt = try object.required("created_at")
        deadline = try object.required("deadline")
        tip = try object.optional("tip") ?? 0
        guard let details = object.raw("details") else {
            throw DecodingFailure(path: path.appending(.key("details")), message: "missing")
        }
        self.details = try OrderDetails(wire: details, type: type, at: path.appending(.key("details")))
        deliveryCode = try object.optional("delivery_code")
        participantCount = try object.optional("participant_count")
        participants = try object.optional("participants")
        timeline = try object.required("timeline")
        autoConfirmAt = try object.optional("auto_confirm_at")
        cancellation = try object.optional("cancellation")
        ratingByPublisher = try object.optional("rating_by_publisher")
        ratingByRunner = try object.optional("rating_by_runner")
        revision = try object.required("revision")
        object.finish()
    }
}

/// One step of an order's life.
public struct TimelineEntry: Sendable, Hashable, WireDecodable {
    public var status: OrderStatus
    public var at: Timestamp
    /// Who took the step; nil for steps the clock took (expiry, auto-confirm, closing time).
    public var actor: UserID?
    /// A cancel reason, "runner gave it back", "auto-confirmed", …
    public var note: String?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        status = try object.required("status")
        at = try object.required("at")
        actor = try object.optional("actor")
        note = try object.optional("note")
        object.finish()
    }
}

public struct Cancellation: Sendable, Hashable, WireDecodable {
    public var cause: CancellationCause
    /// The publisher's reason, required once a runner held the order.
    public var reason: String?
    /// Fen paid to the runner: a cancel after the grace window.
    public var fee: Int

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        cause = try object.required("cause")
        reason = try object.optional("reason")
        fee = try object.required("fee")
        object.finish()
    }
}

public struct Rating: Sendable, Hashable, WireDecodable {
    /// 1–5.
    public var stars: Int
    /// "" when none was written.
    public var comment: String
    public var at: Timestamp

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        stars = try object.required("stars")
        comment = try object.optional("comment") ?? ""
        at = try object.required("at")
        object.finish()
    }
}
