// A typed request: the operation's name, its `data`, and how to read its reply. One value type
// per operation of protocol/ (the files next to this one), sent with
// `BangbangConnection.send(_:)`.
import JSON

/// One operation of the protocol with its fields, and the reply it is answered with.
public protocol BangbangRequest: Sendable {
    associatedtype Reply: Sendable
    /// The operation name, e.g. `order.accept`.
    var operation: String { get }
    /// The request's `data`; nil for an operation without fields.
    var data: JSONValue? { get }
    /// Reads the reply's `data`.
    func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> Reply
    /// What the reply changes about the connection itself (a login, a subscription). Only the
    /// library's own requests have one.
    var effect: RequestEffect { get }
}

extension BangbangRequest {
    public var effect: RequestEffect { .none }
}

/// What a successful request changes about the connection. Opaque: the library's login,
/// logout and board requests use it so that `send` keeps the session and the subscription.
public struct RequestEffect: Sendable {
    enum Kind: Sendable {
        case none
        /// The reply carries a token: keep the session, resume it on every later connection.
        case logIn
        /// The session is over.
        case logOut
        /// The built-in administrator: log in again with the secret after a reconnect.
        case administrator(secret: String)
        /// Keep the feed and subscribe again after a reconnect.
        case subscribe(BoardFilter, limit: Int?)
        case unsubscribe
    }

    let kind: Kind

    public static let none = RequestEffect(kind: .none)
}

/// The reply's member `key`, read as `Value` (most replies are `{"order": …}`, `{"user": …}`).
func member<Value: WireDecodable>(_ key: String, of data: JSONValue) throws(DecodingFailure) -> Value {
    var object = try WireObject(data, at: [])
    let value: Value = try object.required(key)
    object.finish()
    return value
}

/// A reply that must be `{}`.
func empty(_ data: JSONValue) throws(DecodingFailure) {
    let object = try WireObject(data, at: [])
    object.finish()
}

/// Any operation, with `data` and the reply as plain JSON: for tools (the admin CLI prints
/// replies as they came) and for operations newer than this library.
public struct RawRequest: BangbangRequest {
    public var operation: String
    public var data: JSONValue?

    public init(operation: String, data: JSONValue? = nil) {
        self.operation = operation
        self.data = data
    }

    public func decodeReply(_ data: JSONValue) throws(DecodingFailure) -> JSONValue { data }
}
