// IP addresses as values: parsed from text (RFC 4291 §2.2 for IPv6, dotted decimal for IPv4),
// built from the bytes a PROXY v2 header or a socket address carries, and written back in the
// canonical text form of RFC 5952. No Glibc: the parsers here are fuzzed and tested without a
// network stack.

/// An IPv4 or IPv6 address, without port or zone. Two machine words; compared by value.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable {
        case v4
        case v6
    }

    public let family: Family
    /// For IPv6 the 128 bits in network order (`high` first); for IPv4 `high` is 0 and the 32
    /// bits are the low half of `low`.
    let high: UInt64
    let low: UInt64

    /// `value` is the address as a number: 127.0.0.1 is 0x7F00_0001.
    public init(ipv4 value: UInt32) {
        family = .v4
        high = 0
        low = UInt64(value)
    }

    /// `high` holds the first 64 bits in network order: ::1 is (0, 1).
    public init(ipv6High high: UInt64, low: UInt64) {
        family = .v6
        self.high = high
        self.low = low
    }

    /// Four (IPv4) or sixteen (IPv6) bytes in network order; any other count is caller misuse.
    public init(networkBytes bytes: some Collection<UInt8>) {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address is 4 or 16 bytes, not \(bytes.count)")
        var words = (UInt64(0), UInt64(0))
        for (index, byte) in bytes.enumerated() {
            if index < 8 { words.0 = words.0 << 8 | UInt64(byte) } else { words.1 = words.1 << 8 | UInt64(byte) }
        }
        if bytes.count == 4 {
            self.init(ipv4: UInt32(words.0))
        } else {
            self.init(ipv6High: words.0, low: words.1)
        }
    }

    /// Parses `192.0.2.1` or `2001:db8::1` (also `::ffff:192.0.2.1`); nil for anything else,
    /// including zone ids, brackets, ports and IPv4 parts with leading zeros (which some parsers
    /// read as octal).
    public init?(_ text: some StringProtocol) {
        guard let address = IPAddressText.parse(Array(text.utf8)[...]) else { return nil }
        self = address
    }

    /// The same, over raw bytes (a PROXY v1 line, a header value).
    public init?(parsing bytes: ArraySlice<UInt8>) {
        guard let address = IPAddressText.parse(bytes) else { return nil }
        self = address
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a dual-stack
    /// socket reports for an IPv4 peer); every other address unchanged. Trust and limits compare
    /// unmapped addresses, so one client is one key whichever socket family it arrived on.
    public var unmapped: IPAddress {
        guard family == .v6, high == 0, low >> 32 == 0xFFFF else { return self }
        return IPAddress(ipv4: UInt32(truncatingIfNeeded: low))
    }

    /// 127.0.0.0/8, ::1, and 127.x seen through an IPv4-mapped address.
    public var isLoopback: Bool {
        let address = unmapped
        switch address.family {
        case .v4: return address.low >> 24 == 127
        case .v6: return address.high == 0 && address.low == 1
        }
    }

    var bitCount: Int { family == .v4 ? 32 : 128 }

    /// The address with every bit after the first `prefixLength` cleared.
    func masked(toPrefix prefixLength: Int) -> IPAddress {
        precondition((0...bitCount).contains(prefixLength), "prefix length \(prefixLength) out of range")
        switch family {
        case .v4:
            let mask: UInt64 = prefixLength == 0 ? 0 : (0xFFFF_FFFF << (32 - prefixLength)) & 0xFFFF_FFFF
            return IPAddress(ipv4: UInt32(low & mask))
        case .v6:
            func mask(_ bits: Int) -> UInt64 { bits <= 0 ? 0 : bits >= 64 ? .max : ~(UInt64.max >> bits) }
            return IPAddress(ipv6High: high & mask(prefixLength), low: low & mask(prefixLength - 64))
        }
    }

    public var description: String {
        switch family {
        case .v4:
            return IPAddressText.dotted(UInt32(truncatingIfNeeded: low))
        case .v6:
            return IPAddressText.ipv6(high: high, low: low)
        }
    }
}
