// Feedback from the personal centre, read by administrators.

/// One message sent through "feedback"; ids are sequential from 1 and never reused.
public struct FeedbackEntry: Codable, Sendable, Equatable {
    public var id: UInt64
    public var user: UserID
    public var text: String
    public var contact: String?
    public var submittedAt: Timestamp
}

/// A page of feedback, newest first.
public struct FeedbackPage: Sendable, Equatable {
    public var entries: [FeedbackEntry]
    /// Pass as `before` for the next (older) page; nil when this was the last.
    public var nextBefore: UInt64?
}

/// The limits of feedback fields, counted in Characters.
public enum FeedbackLimits {
    /// A long paragraph; longer reports belong in a support call.
    public static let text = 1...1000
    /// A phone number, e-mail address or WeChat id.
    public static let contact = 100
}
