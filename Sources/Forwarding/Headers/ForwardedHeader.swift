// The `Forwarded` header (RFC 7239): one element per proxy, each a `;`-separated list of
// `name=value` pairs, elements separated by commas and repeated lines joined in order (§4).
//
//   Forwarded: for=192.0.2.60;proto=https;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"
//
// Only `for` (the node that made the request to that proxy, §5.2) and `proto` (the scheme it
// used, §5.4) matter here; `by`, `host` and extensions are checked for syntax and skipped. A
// parameter given twice in one element is malformed (§4). Values are tokens or quoted strings;
// an IPv6 node is bracketed and therefore always quoted (§6).

public enum ForwardedHeader {
    /// The hops of every `Forwarded` field value, in the order received (nearest proxy last).
    public static func parse(_ values: [String]) throws(ForwardedHeaderError) -> [ForwardedHop] {
        var hops: [ForwardedHop] = []
        for value in values {
            var scanner = Scanner(bytes: Array(value.utf8))
            try scanner.parseList(into: &hops)
        }
        return hops
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, HeaderSyntax.isWhitespace(byte) { index += 1 }
        }

        /// `1#forwarded-element`, empty list elements allowed and skipped (RFC 9110 §5.6.1).
        mutating func parseList(into hops: inout [ForwardedHop]) throws(ForwardedHeaderError) {
            while true {
                skipWhitespace()
                guard let byte = current else { return }
                if byte == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                hops.append(try parseElement())
                skipWhitespace()
                guard let next = current else { return }
                guard next == UInt8(ascii: ",") else { throw error("expected ',' between elements") }
                index += 1
            }
        }

        /// `[ forwarded-pair ] *( ";" [ forwarded-pair ] )`
        mutating func parseElement() throws(ForwardedHeaderError) -> ForwardedHop {
            var node: ForwardedHop.Node?
            var usedTLS: Bool?
            var seen: Set<String> = []
            while true {
                skipWhitespace()
                guard let byte = current, byte != UInt8(ascii: ",") else { break }
                if byte == UInt8(ascii: ";") {
                    index += 1
                    continue
                }
                let name = String(decoding: try token(), as: UTF8.self).lowercased()
                guard current == UInt8(ascii: "=") else { throw error("expected '=' after '\(name)'") }
                index += 1
                let value = try parameterValue()
                guard seen.insert(name).inserted else { throw error("'\(name)' appears twice in one element") }
                switch name {
                case "for": node = try Self.node(value)
                case "proto": usedTLS = try HeaderSyntax.usedTLS(scheme: value, header: "Forwarded proto")
                default: break
                }
                skipWhitespace()
                guard let next = current, next != UInt8(ascii: ",") else { break }
                guard next == UInt8(ascii: ";") else { throw error("expected ';' or ',' after a parameter") }
                index += 1
            }
            return ForwardedHop(node: node ?? .unidentified, usedTLS: usedTLS)
        }

        mutating func token() throws(ForwardedHeaderError) -> ArraySlice<UInt8> {
            let start = index
            while let byte = current, HeaderSyntax.isTokenCharacter(byte) { index += 1 }
            guard index > start else { throw error("expected a parameter name") }
            return bytes[start..<index]
        }

        /// `token / quoted-string`, unquoted.
        mutating func parameterValue() throws(ForwardedHeaderError) -> ArraySlice<UInt8> {
            guard current == UInt8(ascii: "\"") else {
                let start = index
                while let byte = current, HeaderSyntax.isTokenCharacter(byte) { index += 1 }
                guard index > start else { throw error("expected a value") }
                return bytes[start..<index]
            }
            index += 1
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return value[...]
                case UInt8(ascii: "\\"):
                    guard let escaped = current, Self.isQuotedPairCharacter(escaped) else { throw error("a bad escape in a quoted value") }
                    value.append(escaped)
                    index += 1
                default:
                    guard Self.isQuotedTextCharacter(byte) else { throw error("a control character in a quoted value") }
                    value.append(byte)
                }
            }
            throw error("a quoted value is not closed")
        }

        /// RFC 9110 §5.6.4: qdtext is HTAB, SP, and visible characters other than `"` and `\`.
        static func isQuotedTextCharacter(_ byte: UInt8) -> Bool {
            byte == 0x09 || byte == 0x20 || byte == 0x21 || (0x23...0x5B).contains(byte) || (0x5D...0x7E).contains(byte) || byte >= 0x80
        }

        static func isQuotedPairCharacter(_ byte: UInt8) -> Bool {
            byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
        }

        /// `nodename [ ":" node-port ]`, nodename being an IPv4 address, a bracketed IPv6
        /// address, `unknown` or an obfuscated `_identifier` (§6).
        static func node(_ value: ArraySlice<UInt8>) throws(ForwardedHeaderError) -> ForwardedHop.Node {
            let text = String(decoding: value, as: UTF8.self)
            if text.lowercased() == "unknown" || (text.lowercased().hasPrefix("unknown:") && isNodePort(value.dropFirst(7))) {
                return .unidentified
            }
            if value.first == UInt8(ascii: "_") {
                let name = value.prefix { $0 != UInt8(ascii: ":") }
                let rest = value[name.endIndex...]
                guard isObfuscated(name), rest.isEmpty || isNodePort(rest) else {
                    throw ForwardedHeaderError("Forwarded for: '\(HeaderSyntax.printable(value))' is not a node")
                }
                return .unidentified
            }
            if value.first == UInt8(ascii: "["), let close = value.firstIndex(of: UInt8(ascii: "]")) {
                let rest = value[value.index(after: close)...]
                if rest.isEmpty || isNodePort(rest),
                   let address = IPAddress(parsing: value[value.index(after: value.startIndex)..<close]), address.family == .v6 {
                    return .address(address)
                }
            } else {
                let host = value.prefix { $0 != UInt8(ascii: ":") }
                let rest = value[host.endIndex...]
                if rest.isEmpty || isNodePort(rest), let address = IPAddress(parsing: host), address.family == .v4 {
                    return .address(address)
                }
            }
            throw ForwardedHeaderError("Forwarded for: '\(HeaderSyntax.printable(value))' is not a node")
        }

        /// `":" ( port / obfport )`.
        static func isNodePort(_ bytes: ArraySlice<UInt8>) -> Bool {
            HeaderSyntax.isPort(bytes) || (bytes.first == UInt8(ascii: ":") && isObfuscated(bytes.dropFirst()))
        }

        /// `"_" 1*( ALPHA / DIGIT / "." / "_" / "-" )`
        static func isObfuscated(_ bytes: ArraySlice<UInt8>) -> Bool {
            bytes.count >= 2 && bytes.first == UInt8(ascii: "_") && bytes.dropFirst().allSatisfy {
                HeaderSyntax.isAlpha($0) || IPAddressText.decimalDigit($0) != nil || "._-".utf8.contains($0)
            }
        }

        func error(_ message: String) -> ForwardedHeaderError {
            ForwardedHeaderError("Forwarded: \(message) at byte \(index)")
        }
    }
}
