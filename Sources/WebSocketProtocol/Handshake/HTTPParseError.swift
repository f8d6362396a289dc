/// Why a peer's HTTP message head was refused. Carries the status a server answers with and a
/// human-readable reason suitable for the response body and for logs.
public struct HTTPParseError: Error, Hashable, Sendable {
    public enum Kind: Sendable, Hashable {
        /// Syntax the grammar of RFC 9112 does not allow (400).
        case malformed
        /// Request line (or status line) longer than `HTTPParserLimits.maximumStartLineLength` (414).
        case startLineTooLong
        /// Header block larger than `HTTPParserLimits.maximumHeaderBlockSize` (431).
        case headerBlockTooLarge
        /// More field lines than `HTTPParserLimits.maximumHeaderCount` (431).
        case tooManyHeaders
        /// A well-formed HTTP version we do not speak (505).
        case unsupportedVersion
        /// The request announces a body; we serve only body-less GET and HEAD (413).
        case bodyNotAllowed
    }

    public var kind: Kind
    /// A short English explanation, safe to echo to the peer (it never contains peer bytes).
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The status code a server should answer with (RFC 9110 §15).
    public var status: Int {
        switch kind {
        case .malformed: 400
        case .startLineTooLong: 414
        case .headerBlockTooLarge, .tooManyHeaders: 431
        case .unsupportedVersion: 505
        case .bodyNotAllowed: 413
        }
    }

    /// The rejection a server sends before closing the connection.
    public var response: HTTPResponse {
        HTTPResponse.rejection(status: status, reason: reason)
    }
}
