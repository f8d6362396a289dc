// Identity verification that lets a user become a runner.
//
//   (none) ──submit──▶ pending ──approve──▶ approved
//                        │  ▲
//                 reject │  │ submit again
//                        ▼  │
//                      rejected
//
// Only approved users may accept orders (`AccountStore.canRunErrands`).

public enum VerificationStatus: String, Codable, Sendable {
    case pending
    case approved
    case rejected
}

/// The latest application of a user, with its outcome.
public struct RunnerVerification: Codable, Sendable, Equatable {
    public var status: VerificationStatus
    public var realName: String
    public var studentID: String
    public var school: String
    public var submittedAt: Timestamp
    public var decidedAt: Timestamp?
    public var decidedBy: UserID?
    public var rejectionReason: String?
}

/// The limits of verification fields, counted in Characters.
public enum VerificationLimits {
    /// Chinese names are 2–4 characters, transliterated foreign names much longer.
    public static let realName = 1...40
    /// Student numbers are short; the slack covers prefixes some schools use.
    public static let studentID = 1...32
    /// Enough to explain a rejection in a sentence or two.
    public static let reason = 1...200
}
