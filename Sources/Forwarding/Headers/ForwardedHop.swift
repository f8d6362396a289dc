// One proxy's entry in a forwarding header, whichever header it came from.

/// What one proxy said about the request it received: who sent it (`for`) and over what.
public struct ForwardedHop: Sendable, Hashable {
    public enum Node: Sendable, Hashable {
        case address(IPAddress)
        /// `unknown`, an obfuscated identifier such as `_hidden` (RFC 7239 §6.2, §6.3), or an
        /// element without `for`: the proxy does not say who its client was.
        case unidentified
    }

    public var node: Node
    /// The protocol the node used towards that proxy: true for https and wss, false for http
    /// and ws, nil when the header does not say or names another scheme.
    public var usedTLS: Bool?

    public init(node: Node, usedTLS: Bool? = nil) {
        self.node = node
        self.usedTLS = usedTLS
    }
}

/// A `Forwarded`, `X-Forwarded-For` or `X-Forwarded-Proto` value that does not parse. From a
/// trusted proxy that is a broken proxy or a broken chain, and the request is refused (400).
public struct ForwardedHeaderError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Byte classes shared by the header parsers (RFC 9110 §5.6).
enum HeaderSyntax {
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    static func isAlpha(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// Elements of a comma-separated list, whitespace-trimmed, empty ones dropped (RFC 9110 §5.6.1).
    static func listElements(_ values: [String]) -> [ArraySlice<UInt8>] {
        var elements: [ArraySlice<UInt8>] = []
        for value in values {
            let bytes = Array(value.utf8)
            for element in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                let trimmed = trimmed(element)
                if !trimmed.isEmpty { elements.append(trimmed) }
            }
        }
        return elements
    }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
              let last = bytes.lastIndex(where: { !isWhitespace($0) }) else { return [] }
        return bytes[first...last]
    }

    /// A URI scheme (RFC 3986 §3.1) mapped to whether it is the TLS one; throws for text that is
    /// not a scheme at all.
    static func usedTLS(scheme bytes: ArraySlice<UInt8>, header: String) throws(ForwardedHeaderError) -> Bool? {
        guard let first = bytes.first, isAlpha(first),
              bytes.allSatisfy({ isAlpha($0) || IPAddressText.decimalDigit($0) != nil || "+-.".utf8.contains($0) })
        else { throw ForwardedHeaderError("\(header): '\(printable(bytes))' is not a URI scheme") }
        switch String(decoding: bytes, as: UTF8.self).lowercased() {
        case "https", "wss": return true
        case "http", "ws": return false
        default: return nil
        }
    }

    /// `[v6]`, `[v6]:port`, `v4` or `v4:port`; with `allowsBareIPv6`, also an unbracketed IPv6
    /// address (X-Forwarded-For writes them so; RFC 7239 always brackets them).
    static func nodeAddress(_ bytes: ArraySlice<UInt8>, allowsBareIPv6: Bool) -> IPAddress? {
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")),
                  let address = IPAddress(parsing: bytes[bytes.index(after: bytes.startIndex)..<close]),
                  address.family == .v6 else { return nil }
            let rest = bytes[bytes.index(after: close)...]
            return rest.isEmpty || isPort(rest) ? address : nil
        }
        let colons = bytes.lazy.filter { $0 == UInt8(ascii: ":") }.count
        if colons == 1, let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            guard isPort(bytes[colon...]), let address = IPAddress(parsing: bytes[..<colon]), address.family == .v4 else { return nil }
            return address
        }
        if colons > 1 {
            guard allowsBareIPv6, let address = IPAddress(parsing: bytes), address.family == .v6 else { return nil }
            return address
        }
        return IPAddress(parsing: bytes)
    }

    /// `:` and 1...5 digits (RFC 7239 §6: `port = 1*5DIGIT`).
    static func isPort(_ bytes: ArraySlice<UInt8>) -> Bool {
        let digits = bytes.dropFirst()
        return bytes.first == UInt8(ascii: ":") && (1...5).contains(digits.count)
            && digits.allSatisfy { IPAddressText.decimalDigit($0) != nil }
    }

    static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix(64).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
