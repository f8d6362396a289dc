// auth.*: SMS codes, logging in and out, devices and passwords (operations-accounts.md).
// `auth.resume` is not here: the connection resumes by itself on every new connection.
import JSON

/// `auth.request_code`: send a 6-digit SMS code to `phone`.
public struct RequestCode: BangbangRequest {
    public var phone: String
    public var purpose: CodePurpose

    public init(phone: String, purpose: CodePurpose = .login) {
        self.phone = phone
        self.purpose = purpose
    }

    public var operation: String { "auth.request_code" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["phone"] = .string(phone)
        if purpose != .login { object["purpose"] = purpose.wireValue }
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> CodeRequestResult {
        try CodeRequestResult(wire: data, at: [])
    }
}

/// `auth.login_code`: log in (or register) with the SMS code. The connection keeps the session.
public struct LogInWithCode: BangbangRequest {
    public var phone: String
    public var code: String
    /// Shown in `auth.sessions`, e.g. "iPhone 15".
    public var device: String?

    public init(phone: String, code: String, device: String? = nil) {
        self.phone = phone
        self.code = code
        self.device = device
    }

    public var operation: String { "auth.login_code" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["phone"] = .string(phone)
        object["code"] = .string(code)
        object["device"] = device.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> LoginResult { try LoginResult(wire: data, at: []) }
    public var effect: RequestEffect { RequestEffect(kind: .logIn) }
}

/// `auth.login_password`: log in with a password set by `SetPassword`.
public struct LogInWithPassword: BangbangRequest {
    public var phone: String
    public var password: String
    public var device: String?

    public init(phone: String, password: String, device: String? = nil) {
        self.phone = phone
        self.password = password
        self.device = device
    }

    public var operation: String { "auth.login_password" }
    public var data: JSONValue? {
        var object = WireObjectBuilder()
        object["phone"] = .string(phone)
        object["password"] = .string(password)
        object["device"] = device.map(JSONValue.string)
        return object.value
    }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> LoginResult { try LoginResult(wire: data, at: []) }
    public var effect: RequestEffect { RequestEffect(kind: .logIn) }
}

/// `auth.admin_secret`: the operator's login on the server's own machine, with the content of
/// `<data-dir>/admin-secret`. Loopback connections only (a `wss://` one to 127.0.0.1 counts).
/// The connection logs in with it again after a reconnect; nothing is stored.
public struct LogInAsAdministrator: BangbangRequest {
    public var secret: String

    public init(secret: String) { self.secret = secret }

    public var operation: String { "auth.admin_secret" }
    public var data: JSONValue? { ["secret": .string(secret)] }
    /// The built-in administrator's user id, 0.
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> UserID { try member("administrator", of: data) }
    public var effect: RequestEffect { RequestEffect(kind: .administrator(secret: secret)) }
}

/// `auth.logout`: log this device out; the stored session is forgotten. The connection stays up
/// for a new login.
public struct LogOut: BangbangRequest {
    public init() {}
    public var operation: String { "auth.logout" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) { try empty(data) }
    public var effect: RequestEffect { RequestEffect(kind: .logOut) }
}

/// `auth.sessions`: my logged-in devices, oldest first.
public struct ListSessions: BangbangRequest {
    public init() {}
    public var operation: String { "auth.sessions" }
    public var data: JSONValue? { nil }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> [DeviceSession] { try member("sessions", of: data) }
}

/// `auth.revoke_session`: log out one of my devices (a lost phone). Revoking this device's own
/// session logs this connection out too (it then reports `.loggedOut`).
public struct RevokeSession: BangbangRequest {
    public var sessionID: String

    public init(sessionID: String) { self.sessionID = sessionID }

    public var operation: String { "auth.revoke_session" }
    public var data: JSONValue? { ["session_id": .string(sessionID)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) { try empty(data) }
}

/// `auth.set_password`: a first password (8–128 characters).
public struct SetPassword: BangbangRequest {
    public var password: String

    public init(password: String) { self.password = password }

    public var operation: String { "auth.set_password" }
    public var data: JSONValue? { ["password": .string(password)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) { try empty(data) }
}

/// `auth.change_password`.
public struct ChangePassword: BangbangRequest {
    public var oldPassword: String
    public var newPassword: String

    public init(oldPassword: String, newPassword: String) {
        self.oldPassword = oldPassword
        self.newPassword = newPassword
    }

    public var operation: String { "auth.change_password" }
    public var data: JSONValue? { ["old_password": .string(oldPassword), "new_password": .string(newPassword)] }
    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) { try empty(data) }
}
