// Feedback from the personal centre, read by administrators.

/// One message sent through "feedback"; ids are sequential from 1 and never reused.
public struct FeedbackEntry: Codable, Sendable, Equatable {
    public var id: UInt64
    public var user: UserID
    public var text: String
    public var contact: String?
    public var submittedAt: Timestamp

    public init(id: UInt64, user: UserID, text: String, contact: String?, submittedAt: Timestamp) {
        self.id = id
        self.user = user
        self.text = text
        self.contact = contact
        self.submittedAt = submittedAt
    }
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

// Each field's rule, for checking a request in its table's order (see RunnerVerification.swift).
extension FeedbackEntry {
    public static func validatedText(_ value: String) throws(DomainError) -> String {
        try AccountText.validated(value, field: "text", label: "Feedback", length: FeedbackLimits.text, allowsNewlines: true)
    }

    /// Trimmed; nil when empty.
    public static func validatedContact(_ value: String) throws(DomainError) -> String? {
        let trimmed = try AccountText.validated(value, field: "contact", label: "Contact", length: 0...FeedbackLimits.contact)
        return trimmed.isEmpty ? nil : trimmed
    }
}
