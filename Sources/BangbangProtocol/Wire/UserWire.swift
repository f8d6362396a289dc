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
    /// The fields of `profile.update`, read into a partial edit in the order of its table. Without
    /// `campuses` only the shape is checked (type, a generous length cap so no huge string
    /// reaches the domain); with the deployment's campuses (empty: any) each field's value is
    /// also checked by the domain's rule as soon as it is read, and the edit comes back
    /// normalized (trimmed), so the first bad field in the table is the one named. An empty edit
    /// is left to the domain, which refuses it naming `profile`.
    public static func decodeProfileUpdate(_ arguments: Arguments, campuses: [String]? = nil) throws(DomainError) -> ProfileUpdate {
        try arguments.allowOnly(["nickname", "avatar_url", "gender", "campus", "dorm", "bio"])
        var edit = ProfileUpdate()
        edit.nickname = try arguments.optionalString("nickname", maxLength: 200)
        if campuses != nil, let value = edit.nickname { edit.nickname = try ProfileUpdate.validatedNickname(value) }
        edit.avatarURL = try arguments.optionalString("avatar_url", maxLength: 2048)
        if campuses != nil, let value = edit.avatarURL { edit.avatarURL = try ProfileUpdate.validatedAvatarURL(value) }
        edit.gender = try arguments.optionalChoice("gender", as: Gender.self)
        edit.campus = try arguments.optionalString("campus", maxLength: 200)
        if let campuses, let value = edit.campus { edit.campus = try ProfileUpdate.validatedCampus(value, campuses: campuses) }
        edit.dorm = try arguments.optionalString("dorm", maxLength: 200)
        if campuses != nil, let value = edit.dorm { edit.dorm = try ProfileUpdate.validatedDorm(value) }
        edit.bio = try arguments.optionalString("bio", maxLength: 2000)
        if campuses != nil, let value = edit.bio { edit.bio = try ProfileUpdate.validatedBio(value) }
        return edit
    }
}
