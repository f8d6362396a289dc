// What one viewer may see of an order (product brief, "Privacy and safety").

/// An order as shown to one viewer. Private details (pickup code, room, phone) only reach the
/// publisher and the assigned runner; the delivery code only the publisher; the participant
/// list only the publisher and the participants (others see the count).
public struct OrderView: Codable, Hashable, Sendable {
    public var id: OrderID
    public var type: OrderType
    public var publisher: UserID
    public var campus: String
    public var createdAt: Timestamp
    public var deadline: Timestamp
    public var tip: Cents
    public var status: OrderStatus
    public var runner: UserID?
    public var details: OrderDetails
    public var deliveryCode: String?
    public var participants: [UserID]
    public var participantCount: Int
    public var timeline: [TimelineEntry]
    public var autoConfirmAt: Timestamp?
    public var cancellation: Cancellation?
    public var ratingByPublisher: Rating?
    public var ratingByRunner: Rating?
    public var revision: Int

    /// The view for `viewer`; nil means anonymous (the public board).
    public init(_ order: Order, viewer: UserID?) {
        let isPublisher = viewer == order.publisher
        let isRunner = viewer != nil && viewer == order.runner
        let isParticipant = viewer.map { order.participants.contains($0) } ?? false
        id = order.id
        type = order.type
        publisher = order.publisher
        campus = order.campus
        createdAt = order.createdAt
        deadline = order.deadline
        tip = order.tip
        status = order.status
        runner = order.runner
        details = isPublisher || isRunner ? order.details : order.details.redacted
        deliveryCode = isPublisher ? order.deliveryCode : nil
        participants = isPublisher || isParticipant ? order.participants : []
        participantCount = order.participants.count
        timeline = order.timeline
        autoConfirmAt = order.autoConfirmAt
        cancellation = order.cancellation
        ratingByPublisher = order.ratingByPublisher
        ratingByRunner = order.ratingByRunner
        revision = order.revision
    }
}
