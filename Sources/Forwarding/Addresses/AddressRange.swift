// CIDR ranges (`10.0.0.0/8`, `fd00::/8`, a bare address for one host) and the set of them an
// operator trusts as proxies (`--trusted-proxy`, repeatable).

/// A network: an address and how many of its leading bits every member shares.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    /// Why a `--trusted-proxy` value is not a range.
    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        case notAnAddress
        case badPrefixLength
        /// `10.0.0.1/8`: bits set after the prefix are almost always a typo for the network.
        case hostBitsSet(network: AddressRange)

        public var description: String {
            switch self {
            case .notAnAddress: "expected an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8"
            case .badPrefixLength: "the prefix length must be 0...32 for IPv4 and 0...128 for IPv6"
            case .hostBitsSet(let network): "bits are set after the prefix; did you mean \(network)?"
            }
        }
    }

    /// An IPv4-mapped IPv6 range (`::ffff:10.0.0.0/104`) becomes the IPv4 range it covers, since
    /// addresses are unmapped before they are compared.
    public init(network: IPAddress, prefixLength: Int) {
        precondition((0...network.bitCount).contains(prefixLength), "prefix length \(prefixLength) out of range")
        if network.family == .v6, prefixLength >= 96, network.unmapped.family == .v4 {
            self.network = network.unmapped.masked(toPrefix: prefixLength - 96)
            self.prefixLength = prefixLength - 96
        } else {
            self.network = network.masked(toPrefix: prefixLength)
            self.prefixLength = prefixLength
        }
    }

    /// `ADDRESS` (a single host) or `ADDRESS/PREFIX`.
    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { throw .notAnAddress }
        var length = address.bitCount
        if parts.count == 2 {
            guard parts[1].utf8.allSatisfy({ IPAddressText.decimalDigit($0) != nil }), parts[1].count <= 3,
                  let parsed = Int(parts[1]), parsed <= address.bitCount
            else { throw .badPrefixLength }
            length = parsed
        }
        let range = AddressRange(network: address, prefixLength: length)
        guard address.masked(toPrefix: length) == address else { throw .hostBitsSet(network: range) }
        self = range
    }

    public func contains(_ address: IPAddress) -> Bool {
        let address = address.unmapped
        return address.family == network.family && address.masked(toPrefix: prefixLength) == network
    }

    public var description: String { "\(network)/\(prefixLength)" }
}

/// The peers whose word about a client's address is taken: the PROXY protocol header and the
/// `Forwarded` / `X-Forwarded-For` headers count only from them. Empty by default, so a server
/// that was not told about its proxies believes no one.
public struct TrustedProxies: Sendable, Hashable {
    public var ranges: [AddressRange]

    public init(_ ranges: [AddressRange] = []) {
        self.ranges = ranges
    }

    public var isEmpty: Bool { ranges.isEmpty }

    public func contains(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }
}
