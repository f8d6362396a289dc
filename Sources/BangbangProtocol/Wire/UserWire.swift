// The user on the wire (protocol/operations.md, "The user object").
import BangbangCore

public enum UserWire {
    public static func encode(_ view: UserView) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .integer(Int64(view.id.rawValue)),
            "nickname": .string(view.profile.nickname),
            "gender": .string(view.profile.gender.rawValue),
            "is_verified_runner": .bool(view.isVerifiedRunner),
            "registered_at": .integer(view.registeredAt.rawValue),
        ]
        if let value = view.profile.avatarURL { object["avatar_url"] = .string(value) }
        if let value = view.profile.campus { object["campus"] = .string(value) }
        if let value = view.profile.dorm { object["dorm"] = .string(value) }
        if let value = view.profile.bio { object["bio"] = .string(value) }
        if let phone = view.phone { object["phone"] = .string(phone.rawValue) }
        if let verification = view.verification { object["verification"] = encode(verification) }
        if let value = view.isAdministrator { object["is_administrator"] = .bool(value) }
        if let value = view.hasPassword { object["has_password"] = .bool(value) }
        return .object(object)
    }

    public static func encode(_ verification: RunnerVerification) -> JSONValue {
        var object: [String: JSONValue] = [
            "status": .string(verification.status.rawValue),
            "real_name": .string(verification.realName),
            "student_id": .string(verification.studentID),
            "school": .string(verification.school),
            "submitted_at": .integer(verification.submittedAt.rawValue),
        ]
        if let reason = verification.rejectionReason { object["rejection_reason"] = .string(reason) }
        return .object(object)
    }
}

extension UserWire {
    /// The fields of `profile.update`, read into a partial edit. Only the shape is checked here
    /// (type, a generous length cap so no huge string reaches the domain); the domain applies the
    /// exact limits and trims. An empty edit is left to the domain, which refuses it naming `profile`.
    public static func decodeProfileUpdate(_ arguments: Arguments) throws(DomainError) -> ProfileUpdate {
        try arguments.allowOnly(["nickname", "avatar_url", "gender", "campus", "dorm", "bio"])
        return ProfileUpdate(nickname: try arguments.optionalString("nickname", maxLength: 200),
                             avatarURL: try arguments.optionalString("avatar_url", maxLength: 2048),
                             gender: try arguments.optionalChoice("gender", as: Gender.self),
                             campus: try arguments.optionalString("campus", maxLength: 200),
                             dorm: try arguments.optionalString("dorm", maxLength: 200),
                             bio: try arguments.optionalString("bio", maxLength: 2000))
    }
}
