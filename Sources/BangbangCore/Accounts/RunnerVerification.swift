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

    public init(status: VerificationStatus, realName: String, studentID: String, school: String, submittedAt: Timestamp,
                decidedAt: Timestamp? = nil, decidedBy: UserID? = nil, rejectionReason: String? = nil) {
        self.status = status
        self.realName = realName
        self.studentID = studentID
        self.school = school
        self.submittedAt = submittedAt
        self.decidedAt = decidedAt
        self.decidedBy = decidedBy
        self.rejectionReason = rejectionReason
    }
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

// Each field's rule, one function each: the server checks a request's fields with these in the
// order of the operation's table before it looks at any state (protocol/README.md, "Error
// precedence"), and the decide methods check them again.
extension RunnerVerification {
    public static func validatedRealName(_ value: String) throws(DomainError) -> String {
        try AccountText.validated(value, field: "real_name", label: "Real name", length: VerificationLimits.realName)
    }

    /// Letters, digits and dashes.
    public static func validatedStudentID(_ value: String) throws(DomainError) -> String {
        let number = try AccountText.validated(value, field: "student_id", label: "Student id",
                                               length: VerificationLimits.studentID)
        guard number.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
            throw DomainError(.invalidField, "A student id has only letters, digits and dashes.", field: "student_id")
        }
        return number
    }

    /// One of `campuses` when the deployment lists some.
    public static func validatedSchool(_ value: String, campuses: [String]) throws(DomainError) -> String {
        try ProfileUpdate.validatedCampus(value, field: "school", campuses: campuses, allowsEmpty: false)
    }

    public static func validatedRejectionReason(_ value: String) throws(DomainError) -> String {
        try AccountText.validated(value, field: "reason", label: "Reason", length: VerificationLimits.reason)
    }
}
