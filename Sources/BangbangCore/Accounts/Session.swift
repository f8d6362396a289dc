// Sessions and their bearer tokens.
//
// A token is self-describing and signed, but not self-sufficient: it names a session that must
// still exist, unrevoked and unexpired, in the store. The signature lets the server throw away
// forged tokens without a lookup and keeps session ids from being guessed into; the lookup gives
// logout. Layout, before base64url (RFC 4648 §5, unpadded):
//
//   version (1 byte, 1) | user id (8, big-endian) | session id (16) | issued at ms (8, big-endian)
//   | HMAC-SHA256(secret, "bangbang-session" | the 33 bytes before) (32)
//
// 65 bytes, 87 characters. The secret is the server's; it persists it so tokens survive restarts.
import Crypto

/// 128 random bits naming one login on one device.
public struct SessionID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(using generator: inout some RandomNumberGenerator) {
        self.init(high: generator.next(), low: generator.next())
    }

    public static func < (lhs: SessionID, rhs: SessionID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    /// 32 lowercase hex digits.
    public var description: String { Self.hex(high) + Self.hex(low) }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// One login: a user on a device, until logout or `expiresAt`.
public struct Session: Codable, Sendable, Equatable {
    public var id: SessionID
    public var user: UserID
    /// What the client called itself ("iPhone 15"), for a "logged-in devices" list.
    public var device: String?
    public var issuedAt: Timestamp
    /// Fixed at login from the policy of the day, so replay never depends on today's policy.
    public var expiresAt: Timestamp
    public var revokedAt: Timestamp?

    public init(id: SessionID, user: UserID, device: String?, issuedAt: Timestamp, expiresAt: Timestamp,
                revokedAt: Timestamp? = nil) {
        self.id = id
        self.user = user
        self.device = device
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    public var isRevoked: Bool { revokedAt != nil }
}

/// Who a valid token speaks for.
public struct AuthenticatedSession: Sendable, Hashable {
    public var user: UserID
    public var session: SessionID
}

/// Making and reading session tokens; pure functions of their arguments.
public enum SessionToken {
    static let version: UInt8 = 1
    static let payloadLength = 33
    static let macLength = 32
    static let domain = Array("bangbang-session".utf8)
    /// Longer strings cannot be a token; refused before decoding.
    static let maximumTextLength = 128

    /// The token for `session`, signed under `secret`.
    public static func make(for session: Session, secret: [UInt8]) -> String {
        precondition(secret.count >= 16, "session secret must be at least 16 bytes")
        var bytes = [UInt8]()
        bytes.reserveCapacity(payloadLength + macLength)
        bytes.append(version)
        append(session.user.rawValue, to: &bytes)
        append(session.id.high, to: &bytes)
        append(session.id.low, to: &bytes)
        append(UInt64(bitPattern: session.issuedAt.rawValue), to: &bytes)
        bytes += Digest.hmacSHA256(key: secret, message: domain + bytes)
        return Base64.encode(bytes, urlSafe: true)
    }

    /// The user a token names, read without checking its signature: where to route a resume, to
    /// the owner of that user's account, which checks it. Nil when it cannot be a token.
    public static func claimedUser(of token: String) -> UserID? { claims(of: token)?.user }

    /// The user and session a token names, read without checking its signature: what a node keeps
    /// of a login its account owner checked and answered. Nil when it cannot be a token.
    public static func claims(of token: String) -> AuthenticatedSession? {
        guard token.utf8.count <= maximumTextLength, let bytes = Base64.decode(token),
              bytes.count == payloadLength + macLength, bytes[0] == version else { return nil }
        return AuthenticatedSession(user: UserID(rawValue: read(bytes, at: 1)),
                                    session: SessionID(high: read(bytes, at: 9), low: read(bytes, at: 17)))
    }

    /// The claims of a token whose signature verifies under `secret`, else nil.
    static func verifiedClaims(of token: String, secret: [UInt8])
        -> (user: UserID, session: SessionID, issuedAt: Timestamp)? {
        guard token.utf8.count <= maximumTextLength, let bytes = Base64.decode(token),
              bytes.count == payloadLength + macLength, bytes[0] == version,
              // One spelling per token: stray low bits in the last character must not give a
              // second string that authenticates the same.
              Base64.encode(bytes, urlSafe: true) == token
        else { return nil }
        let payload = Array(bytes[0..<payloadLength])
        let expected = Digest.hmacSHA256(key: secret, message: domain + payload)
        guard Digest.constantTimeEquals(Array(bytes[payloadLength...]), expected) else { return nil }
        let user = UserID(rawValue: read(bytes, at: 1))
        let session = SessionID(high: read(bytes, at: 9), low: read(bytes, at: 17))
        let issuedAt = Timestamp(rawValue: Int64(bitPattern: read(bytes, at: 25)))
        return (user, session, issuedAt)
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func read(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
