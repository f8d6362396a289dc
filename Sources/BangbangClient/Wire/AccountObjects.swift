// The account objects of protocol/operations-accounts.md ("Objects"): user, verification,
// session (a logged-in device), feedback.
import JSON

/// A user as the viewer may see them: `phone`, `verification`, `isAdministrator` and
/// `hasPassword` are there only for yourself and for administrators.
public struct User: Sendable, Hashable, Identifiable, WireDecodable {
    public var id: UserID
    /// `用户{id}` until changed.
    public var nickname: String
    public var gender: Gender
    public var avatarURL: String?
    public var campus: String?
    public var dorm: String?
    public var bio: String?
    public var isVerifiedRunner: Bool
    public var registeredAt: Timestamp
    /// E.164. Self and administrators only.
    public var phone: String?
    /// Self and administrators only; nil also when never submitted.
    public var verification: Verification?
    /// Self and administrators only.
    public var isAdministrator: Bool?
    /// Whether password login can work. Self and administrators only.
    public var hasPassword: Bool?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        id = try object.required("id")
        nickname = try object.required("nickname")
        gender = try object.required("gender")
        avatarURL = try object.optional("avatar_url")
        campus = try object.optional("campus")
        dorm = try object.optional("dorm")
        bio = try object.optional("bio")
        isVerifiedRunner = try object.required("is_verified_runner")
        registeredAt = try object.required("registered_at")
        phone = try object.optional("phone")
        verification = try object.optional("verification")
        isAdministrator = try object.optional("is_administrator")
        hasPassword = try object.optional("has_password")
        object.finish()
    }
}

/// A runner verification (实名认证) application.
public struct Verification: Sendable, Hashable, WireDecodable {
    public var status: VerificationStatus
    public var realName: String
    public var studentID: String
    public var school: String
    public var submittedAt: Timestamp
    /// When `rejected`.
    public var rejectionReason: String?

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        status = try object.required("status")
        realName = try object.required("real_name")
        studentID = try object.required("student_id")
        school = try object.required("school")
        submittedAt = try object.required("submitted_at")
        rejectionReason = try object.optional("rejection_reason")
        object.finish()
    }
}

/// One logged-in device of the user (`auth.sessions`).
public struct DeviceSession: Sendable, Hashable, Identifiable, WireDecodable {
    /// 32 lowercase hex digits; what `RevokeSession` takes.
    public var id: String
    /// What the client called itself at login.
    public var device: String?
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    /// The session of the connection that asked.
    public var isCurrent: Bool

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        id = try object.required("id")
        device = try object.optional("device")
        issuedAt = try object.required("issued_at")
        expiresAt = try object.required("expires_at")
        isCurrent = try object.required("is_current")
        object.finish()
    }
}

public struct Feedback: Sendable, Hashable, Identifiable, WireDecodable {
    public var id: Int64
    public var userID: UserID
    public var text: String
    public var contact: String?
    public var submittedAt: Timestamp

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        id = try object.required("id")
        userID = try object.required("user_id")
        text = try object.required("text")
        contact = try object.optional("contact")
        submittedAt = try object.required("submitted_at")
        object.finish()
    }
}
