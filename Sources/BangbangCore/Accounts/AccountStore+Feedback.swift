// Feedback: users write, administrators read.

extension AccountStore {
    /// Records a feedback message (text 1…1000 characters, optional contact ≤ 100).
    public func decideFeedback(user: UserID, text: String, contact: String?, now: Timestamp) throws(DomainError) -> AccountEvent {
        let body = try FeedbackEntry.validatedText(text)
        var contactText: String?
        if let contact { contactText = try FeedbackEntry.validatedContact(contact) }
        _ = try account(user)
        return .feedbackSubmitted(FeedbackEntry(id: UInt64(state.feedback.count) + 1, user: user, text: body,
                                                contact: contactText, submittedAt: now))
    }

    /// Feedback newest first, `limit` per page (clamped to 1…`policy.maximumPageSize`), starting
    /// below id `before` (nil: from the newest). Administrators only.
    public func feedbackPage(viewer: UserID, before: UInt64?, limit: Int) throws(DomainError) -> FeedbackPage {
        try requireAdministrator(viewer)
        let size = min(max(limit, 1), policy.maximumPageSize)
        // Entry n has id n + 1, so "ids below `before`" is the prefix of length before - 1.
        let end = min(state.feedback.count, before.map { Int(clamping: $0 == 0 ? 0 : $0 - 1) } ?? Int.max)
        let start = max(0, end - size)
        let entries = Array(state.feedback[start..<end].reversed())
        return FeedbackPage(entries: entries, nextBefore: start > 0 ? entries.last?.id : nil)
    }
}
