/// A close status code (RFC 6455 §7.4.1, registry in §11.7).
///
/// A struct rather than an enum because applications may use 4000–4999 freely and libraries
/// 3000–3999 by registration: the set of valid values is open.
public struct CloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16

    @inlinable
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection has been fulfilled.
    public static let normalClosure = CloseCode(rawValue: 1000)
    /// 1001: an endpoint is going away (server shutdown, page navigation).
    public static let goingAway = CloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = CloseCode(rawValue: 1002)
    /// 1003: a data type the endpoint cannot accept (e.g. binary on a text-only endpoint).
    public static let unsupportedData = CloseCode(rawValue: 1003)
    /// 1005: reserved; reported locally when a close frame carried no code. Never sent.
    public static let noStatusReceived = CloseCode(rawValue: 1005)
    /// 1006: reserved; reported locally when the transport ended without a close frame. Never sent.
    public static let abnormalClosure = CloseCode(rawValue: 1006)
    /// 1007: message data inconsistent with its type (invalid UTF-8 in text).
    public static let invalidFramePayloadData = CloseCode(rawValue: 1007)
    /// 1008: a generic policy violation.
    public static let policyViolation = CloseCode(rawValue: 1008)
    /// 1009: a frame or message too big to process.
    public static let messageTooBig = CloseCode(rawValue: 1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtension = CloseCode(rawValue: 1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalError = CloseCode(rawValue: 1011)
    /// 1012: the service is restarting (IANA registry).
    public static let serviceRestart = CloseCode(rawValue: 1012)
    /// 1013: try again later (IANA registry).
    public static let tryAgainLater = CloseCode(rawValue: 1013)
    /// 1014: bad gateway (IANA registry).
    public static let badGateway = CloseCode(rawValue: 1014)
    /// 1015: reserved; reported locally when the TLS handshake failed. Never sent.
    public static let tlsHandshakeFailure = CloseCode(rawValue: 1015)

    /// Whether a code received in a close frame is acceptable (RFC 6455 §7.4.1, §7.4.2).
    ///
    /// 1000–1003 and 1007–1014 are defined for use on the wire (1012–1014 were registered
    /// after the RFC and are accepted); 1004 is reserved, 1005/1006/1015 must never appear in a
    /// frame; 0–999 are unused; 1016–2999 are reserved for future RFCs; 3000–4999 belong to
    /// libraries and applications. Anything invalid fails the connection with 1002.
    @inlinable
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}
