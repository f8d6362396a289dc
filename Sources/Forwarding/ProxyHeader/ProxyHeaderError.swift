/// Why the bytes at the start of a connection are not a valid PROXY protocol header. The
/// specification's answer to all of them is the same: drop the connection (§2.1, §2.2).
public struct ProxyHeaderError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// Neither the v1 "PROXY " prefix nor the v2 signature: not a PROXY header at all.
        case signature
        /// A v1 line that does not match the grammar exactly, or is longer than 107 bytes.
        case line
        /// A v2 version nibble other than 2.
        case version
        /// A v2 command other than LOCAL and PROXY.
        case command
        /// A v2 family or transport the specification does not define.
        case addressFamily
        /// A v2 length too short for the addresses it announces, longer than we accept, or a TLV
        /// that does not fit inside it.
        case length
        /// The stream ended before the header did.
        case truncated
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
