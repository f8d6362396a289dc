// Errors: the server's refusals (protocol/README.md "Errors" and the per-operation tables), and
// what can go wrong on the way to the server.
import JSON

/// The protocol's stable machine codes. Switch on these; show `ServerError.message`.
public enum ErrorCode: Hashable, Sendable, CustomStringConvertible {
    // Common to every operation (protocol/README.md).
    case badRequest, unknownOperation, invalidField, unauthenticated, sessionExpired, sessionRevoked
    case forbidden, notFound, rateLimited, storageUnavailable, shuttingDown, internalError
    // Accounts (operations-accounts.md).
    case codeIncorrect, codeExpired, phoneTaken, invalidCredentials, passwordAlreadySet, passwordNotSet
    case verificationInProgress, verificationNotPending, administratorUnchanged
    // Orders (operations-orders.md).
    case orderTaken, orderClosed, runnerNotVerified, notYourOrder, invalidTransition, wrongDeliveryCode
    case groupFull, alreadyJoined, notJoined, alreadyRated
    /// A code this version of the library does not know.
    case other(String)

    private static let known: [(String, ErrorCode)] = [
        ("bad_request", .badRequest), ("unknown_operation", .unknownOperation), ("invalid_field", .invalidField),
        ("unauthenticated", .unauthenticated), ("session_expired", .sessionExpired),
        ("session_revoked", .sessionRevoked), ("forbidden", .forbidden), ("not_found", .notFound),
        ("rate_limited", .rateLimited), ("storage_unavailable", .storageUnavailable),
        ("shutting_down", .shuttingDown), ("internal_error", .internalError),
        ("code_incorrect", .codeIncorrect), ("code_expired", .codeExpired), ("phone_taken", .phoneTaken),
        ("invalid_credentials", .invalidCredentials), ("password_already_set", .passwordAlreadySet),
        ("password_not_set", .passwordNotSet), ("verification_in_progress", .verificationInProgress),
        ("verification_not_pending", .verificationNotPending), ("administrator_unchanged", .administratorUnchanged),
        ("order_taken", .orderTaken), ("order_closed", .orderClosed), ("runner_not_verified", .runnerNotVerified),
        ("not_your_order", .notYourOrder), ("invalid_transition", .invalidTransition),
        ("wrong_delivery_code", .wrongDeliveryCode), ("group_full", .groupFull), ("already_joined", .alreadyJoined),
        ("not_joined", .notJoined), ("already_rated", .alreadyRated),
    ]

    public init(rawValue: String) {
        self = Self.known.first { $0.0 == rawValue }?.1 ?? .other(rawValue)
    }

    /// The code as on the wire.
    public var rawValue: String {
        if case .other(let text) = self { return text }
        guard let entry = Self.known.first(where: { $0.1 == self }) else {
            fatalError("internal inconsistency in ErrorCode: \(self) has no wire name")
        }
        return entry.0
    }

    public var description: String { rawValue }

    /// Every code the protocol documents.
    public static var documented: [ErrorCode] { known.map(\.1) }
}

/// A refusal from the server: the request did nothing (except where an event says otherwise).
public struct ServerError: Error, Sendable, Hashable, CustomStringConvertible, WireDecodable {
    public var code: ErrorCode
    /// For people: show it or log it; the wording may change.
    public var message: String
    /// For `invalid_field` and a few others: which field of the request.
    public var field: FieldPath?
    /// For `rate_limited`: how long to wait. nil from a server that does not say.
    public var retryAfter: Duration?
    /// For `invalid_field`: the bounds of the rule the value broke, in the field's unit
    /// (characters, fen, milliseconds since the epoch, a count); nil where none applies.
    public var minimum: Int64?
    public var maximum: Int64?

    public init(code: ErrorCode, message: String, field: FieldPath? = nil, retryAfter: Duration? = nil,
                minimum: Int64? = nil, maximum: Int64? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
        self.minimum = minimum
        self.maximum = maximum
    }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        code = ErrorCode(rawValue: try object.required("code"))
        message = try object.required("message")
        field = (try object.optional("field", as: String.self)).map(FieldPath.init(parsing:))
        retryAfter = (try object.optional("retry_after_ms", as: Int64.self)).map(Duration.protocolMilliseconds)
        minimum = try object.optional("min", as: Int64.self)
        maximum = try object.optional("max", as: Int64.self)
        object.finish()
    }

    public var description: String {
        field.map { "\(code) (\($0)): \(message)" } ?? "\(code): \(message)"
    }
}

/// Everything a request can end with other than its reply.
public enum BangbangError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server refused the request; nothing changed.
    case server(ServerError)
    /// The request was sent but no reply came within the request timeout. It may still take
    /// effect: check (`GetOrder`, `MyOrders`) before repeating a change.
    case timedOut
    /// The connection dropped after the request was sent and before its reply. It may or may not
    /// have taken effect, as with `timedOut`.
    case connectionLost
    /// The request was never sent: the server could not be reached (or the login resumed) within
    /// the request timeout. Safe to repeat. The text says what the last attempt ran into.
    case unreachable(String)
    /// `disconnect()` was called, or the calling task was cancelled.
    case cancelled
    /// The server's reply could not be read: a server this library version does not match.
    case invalidReply(DecodingFailure)

    /// The server's code, when the server refused.
    public var code: ErrorCode? {
        if case .server(let error) = self { return error.code }
        return nil
    }

    public var description: String {
        switch self {
        case .server(let error): "\(error)"
        case .timedOut: "no reply in time"
        case .connectionLost: "the connection dropped before the reply"
        case .unreachable(let reason): "the server could not be reached: \(reason)"
        case .cancelled: "cancelled"
        case .invalidReply(let failure): "unreadable reply: \(failure)"
        }
    }
}
