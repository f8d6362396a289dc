// The personal centre and public information (operations-accounts.md): profile, phone, runner
// verification, feedback, info.get.
import JSON

/// `profile.get`: yourself (complete), or another user (the public view).
public struct GetProfile: BangbangRequest {
    /// nil: yourself.
    public var userID: UserID?

    public init(userID: UserID? = nil) { self.userID = userID }

    public var operation: String { "profile.get" }
    public var data: JSONValue? { userID.map { ["user_id": .integer($0.rawValue)] } }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `profile.update`: only the fields given change; `""` clears an optional one. At least one.
public struct UpdateProfile: BangbangRequest {
    public var nickname: String?
    public var avatarURL: String?
    public var gender: Gender?
    public var campus: String?
    public var dorm: String?
    public var bio: String?

    public init(nickname: String? = nil, avatarURL: String? = nil, gender: Gender? = nil, campus: String? = nil,
                dorm: String? = nil, bio: String? = nil) {
        self.nickname = nickname
        self.avatarURL = avatarURL
        self.gender = gender
        self.campus = campus
        self.dorm = dorm
        self.bio = bio
    }

    public var operation: String { "profile.update" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["nickname"] = nickname.map(JSONValue.string)
        object["avatar_url"] = avatarURL.map(JSONValue.string)
        object["gender"] = gender?.wireValue
        object["campus"] = campus.map(JSONValue.string)
        object["dorm"] = dorm.map(JSONValue.string)
        object["bio"] = bio.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `profile.change_phone`, with a code from `RequestCode(phone: new, purpose: .changePhone)`.
public struct ChangePhone: BangbangRequest {
    public var phone: String
    public var code: String

    public init(phone: String, code: String) {
        self.phone = phone
        self.code = code
    }

    public var operation: String { "profile.change_phone" }
    public var data: JSONValue? { ["phone": .string(phone), "code": .string(code)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> User { try member("user", of: data) }
}

/// `runner.submit_verification`: apply to become a runner.
public struct SubmitVerification: BangbangRequest {
    public var realName: String
    /// Letters, digits and `-`.
    public var studentID: String
    /// One of the server's campuses when it lists some.
    public var school: String

    public init(realName: String, studentID: String, school: String) {
        self.realName = realName
        self.studentID = studentID
        self.school = school
    }

    public var operation: String { "runner.submit_verification" }
    public var data: JSONValue? {
        ["real_name": .string(realName), "student_id": .string(studentID), "school": .string(school)]
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Verification { try member("verification", of: data) }
}

/// `runner.verification`: my application, or nil when I never applied.
public struct GetVerification: BangbangRequest {
    public init() {}
    public var operation: String { "runner.verification" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Verification? {
        var object = try WireObject(data, at: [])
        let verification: Verification? = try object.optional("verification")
        object.finish()
        return verification
    }
}

/// `feedback.submit`; the reply is the feedback's id.
public struct SubmitFeedback: BangbangRequest {
    public var text: String
    /// Phone, e-mail, WeChat id.
    public var contact: String?

    public init(text: String, contact: String? = nil) {
        self.text = text
        self.contact = contact
    }

    public var operation: String { "feedback.submit" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["text"] = .string(text)
        object["contact"] = contact.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Int64 { try member("feedback_id", of: data) }
}

/// `info.get`: allowed before login.
public struct GetServerInfo: BangbangRequest {
    public init() {}
    public var operation: String { "info.get" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> ServerInfo { try ServerInfo(wire: data, at: []) }
}
