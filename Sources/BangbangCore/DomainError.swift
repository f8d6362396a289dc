// Typed domain failures: a stable machine code the app can switch on, plus a human message.
// The wire layer sends both as `{"code": …, "message": …}`; the codes are listed in protocol/.

public struct ErrorCode: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

public struct DomainError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// The request field at fault, for validation errors ("tip", "items[2].qty"), else nil.
    public var field: String?
    /// For `rate_limited`: milliseconds until the limit that refused would admit the request
    /// again (0: as soon as something else changes, e.g. a reply to a request in flight).
    public var retryAfterMilliseconds: Int64?
    /// For `invalid_field`: the bounds of the rule the value broke, in the field's own unit
    /// (characters of text, fen of money, milliseconds since the epoch for times, a count), so
    /// an app can say the limit in its own words ("at most ¥500"). `minimum` alone: the value was
    /// below it; `maximum` alone: above it; both: the range it must be in. Nil where no number
    /// applies (a malformed phone number).
    public var minimum: Int64?
    public var maximum: Int64?

    public init(_ code: ErrorCode, _ message: String, field: String? = nil, minimum: Int64? = nil, maximum: Int64? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.minimum = minimum
        self.maximum = maximum
    }

    /// A `rate_limited` error; every one says when to retry (protocol/README.md, "Errors").
    public static func rateLimited(_ message: String, retryAfterMilliseconds: Int64) -> DomainError {
        var error = DomainError(.rateLimited, message)
        error.retryAfterMilliseconds = max(0, retryAfterMilliseconds)
        return error
    }

    public var description: String { "\(code): \(message)" }
}

extension ErrorCode {
    /// A field is missing, of the wrong type, out of range or too long; `field` names it.
    public static let invalidField = ErrorCode("invalid_field")
    /// The caller may not do this (not their order, not an administrator, not verified…).
    public static let forbidden = ErrorCode("forbidden")
    /// The thing named does not exist (or is not visible to the caller).
    public static let notFound = ErrorCode("not_found")
    /// Too many attempts; retry later.
    public static let rateLimited = ErrorCode("rate_limited")
}
