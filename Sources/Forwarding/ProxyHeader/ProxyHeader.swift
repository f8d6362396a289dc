// What a PROXY protocol header says (HAProxy's "The PROXY protocol, Versions 1 & 2",
// doc/proxy-protocol.txt), and the wire constants both versions use.

/// A parsed PROXY protocol header.
public struct ProxyHeader: Sendable, Hashable {
    public enum Version: Int, Sendable, Hashable {
        case one = 1
        case two = 2
    }

    /// Whom the connection is for.
    public enum Addresses: Sendable, Hashable {
        /// v2 LOCAL (§2.2): the proxy opened the connection for itself, a health check; the
        /// real connection endpoints are the true ones.
        case local
        /// Relayed for a client the header does not name usably: v1 UNKNOWN (§2.1), v2 with the
        /// UNSPEC family or protocol, a UNIX socket or a datagram transport (§2.2, which lets a
        /// receiver fall back to the real endpoints for what it does not implement).
        case unknown
        /// Relayed for a TCP client.
        case tcp(source: IPAddress, sourcePort: UInt16, destination: IPAddress, destinationPort: UInt16)
    }

    public var version: Version
    public var addresses: Addresses
    /// From a v2 PP2_TYPE_SSL TLV (§2.2.6): whether the client reached the proxy over TLS; nil
    /// when the header does not say (v1, or no such TLV).
    public var clientUsedTLS: Bool?

    public init(version: Version, addresses: Addresses, clientUsedTLS: Bool? = nil) {
        self.version = version
        self.addresses = addresses
        self.clientUsedTLS = clientUsedTLS
    }
}

/// Wire constants, named after the specification's own names.
enum ProxyWire {
    /// §2.1: "PROXY" and exactly one space.
    static let v1Prefix: [UInt8] = Array("PROXY ".utf8)
    /// §2.1: the longest line a receiver must accept, CRLF included ("PROXY UNKNOWN" with two
    /// IPv6 addresses and ports); no CRLF within it is an invalid line.
    static let v1MaximumLineLength = 107
    /// §2.2: the 12-byte signature, chosen to fail fast in HTTP, TLS and most other protocols.
    static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// §2.2: version 2 in the high nibble of the 13th byte; LOCAL 0 and PROXY 1 in the low one.
    static let v2Version: UInt8 = 0x2
    static let commandLocal: UInt8 = 0x0
    static let commandProxy: UInt8 = 0x1
    /// §2.2: families in the high nibble of the 14th byte, transports in the low one.
    static let familyUnspecified: UInt8 = 0x0
    static let familyInet: UInt8 = 0x1
    static let familyInet6: UInt8 = 0x2
    static let familyUnix: UInt8 = 0x3
    static let transportUnspecified: UInt8 = 0x0
    static let transportStream: UInt8 = 0x1
    static let transportDatagram: UInt8 = 0x2
    /// §2.2: the address block each family needs (two addresses, then two ports for IP).
    static func addressBlockLength(family: UInt8) -> Int {
        switch family {
        case familyInet: 12
        case familyInet6: 36
        case familyUnix: 216
        default: 0
        }
    }
    /// §2.2: a TLV is a type byte and a two-byte length before its value.
    static let tlvHeaderLength = 3
    /// §2.2.6: PP2_TYPE_SSL; its value starts with the `client` bit field, whose PP2_CLIENT_SSL
    /// bit says the client used TLS, then a 32-bit `verify`.
    static let typeSSL: UInt8 = 0x20
    static let clientSSLFlag: UInt8 = 0x01
    static let sslValueMinimumLength = 5
}
