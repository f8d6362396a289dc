/// An HTTP version as written on the wire, "HTTP/major.minor".
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }
}

/// A parsed request line and header block (RFC 9112 §3, §5).
public struct HTTPRequestHead: Sendable, Hashable {
    /// The method token, case-sensitive as RFC 9110 §9.1 says ("get" is not GET).
    public var method: String
    /// The request-target exactly as received.
    public var target: String
    /// The target up to its first "?" (the whole target for asterisk- and absolute-form).
    public var path: Substring
    /// The part after the first "?", without it; nil when the target has no "?".
    public var query: Substring?
    /// HTTP/1.1, or HTTP/1.0, which parses but cannot upgrade.
    public var version: HTTPVersion
    public var headers: HTTPHeaders

    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = [:]) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            path = target[...]
            query = nil
        }
    }
}

/// A parsed status line and header block (RFC 9112 §4).
public struct HTTPResponseHead: Sendable, Hashable {
    public var version: HTTPVersion
    public var status: Int
    public var reasonPhrase: String
    public var headers: HTTPHeaders

    public init(version: HTTPVersion = .http1_1, status: Int, reasonPhrase: String, headers: HTTPHeaders = [:]) {
        self.version = version
        self.status = status
        self.reasonPhrase = reasonPhrase
        self.headers = headers
    }
}

/// What one call to a head parser's `parse` produced.
public enum HTTPParseProgress<Head: Sendable & Hashable>: Sendable, Hashable {
    /// Every byte given was consumed and the head is not complete yet.
    case needsMoreData
    /// The head ended after `consumedBytes` bytes of this call's input; the bytes after them
    /// belong to whatever follows the head (for a WebSocket, the first frames) and were not
    /// looked at.
    case complete(Head, consumedBytes: Int)
}
