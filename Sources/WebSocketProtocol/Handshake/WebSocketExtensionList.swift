/// One element of a `Sec-WebSocket-Extensions` list (RFC 6455 §9.1):
/// `extension-token *( ";" extension-param )`, `extension-param = token [ "=" (token | quoted-string) ]`.
public struct WebSocketExtension: Sendable, Hashable {
    public struct Parameter: Sendable, Hashable {
        public var name: String
        /// The value with any quoting removed; nil when the parameter has no "=".
        public var value: String?

        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    public var name: String
    public var parameters: [Parameter]

    public init(name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }

    /// The wire form, e.g. `permessage-deflate; server_max_window_bits=10`. Values are written
    /// bare, so they must be tokens.
    public var headerValue: String {
        var text = name
        for parameter in parameters {
            text += "; " + parameter.name
            if let value = parameter.value { text += "=" + value }
        }
        return text
    }

    /// Parses every `Sec-WebSocket-Extensions` field of `headers` as one list (several offers,
    /// several fields). Nil when the syntax is broken anywhere; an empty array when absent.
    public static func parseList(in headers: HTTPHeaders) -> [WebSocketExtension]? {
        var result: [WebSocketExtension] = []
        for value in headers.values(named: "Sec-WebSocket-Extensions") {
            guard let parsed = parseList(value) else { return nil }
            result += parsed
        }
        return result
    }

    /// Parses one field value. Nil when the syntax is broken anywhere.
    public static func parseList(_ text: String) -> [WebSocketExtension]? {
        var scanner = ExtensionListScanner(bytes: Array(text.utf8))
        return scanner.parseList()
    }
}

/// A recursive-descent scan of one bounded field value (already limited by the head parser).
private struct ExtensionListScanner {
    let bytes: [UInt8]
    var index = 0

    mutating func parseList() -> [WebSocketExtension]? {
        var extensions: [WebSocketExtension] = []
        while true {
            skipWhitespace()
            if index == bytes.count { return extensions }
            // Empty list elements ("a, , b") are allowed and ignored (RFC 9110 §5.6.1).
            if bytes[index] == ASCII.comma { index += 1; continue }
            guard let parsed = parseExtension() else { return nil }
            extensions.append(parsed)
            skipWhitespace()
            if index == bytes.count { return extensions }
            guard bytes[index] == ASCII.comma else { return nil }
            index += 1
        }
    }

    private mutating func parseExtension() -> WebSocketExtension? {
        guard let name = parseToken() else { return nil }
        var parameters: [WebSocketExtension.Parameter] = []
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == ASCII.semicolon else { break }
            index += 1
            skipWhitespace()
            guard let parameterName = parseToken() else { return nil }
            skipWhitespace()
            var value: String?
            if index < bytes.count, bytes[index] == ASCII.equals {
                index += 1
                skipWhitespace()
                guard index < bytes.count else { return nil }
                value = bytes[index] == ASCII.quote ? parseQuotedToken() : parseToken()
                guard value != nil else { return nil }
            }
            parameters.append(.init(name: parameterName, value: value))
        }
        return WebSocketExtension(name: name, parameters: parameters)
    }

    private mutating func parseToken() -> String? {
        let start = index
        while index < bytes.count, HTTPSyntax.isTokenCharacter(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// A quoted-string whose unescaped content must itself be a token (RFC 6455 §9.1).
    private mutating func parseQuotedToken() -> String? {
        index += 1
        var content: [UInt8] = []
        while index < bytes.count {
            var byte = bytes[index]
            index += 1
            if byte == ASCII.quote {
                guard !content.isEmpty, content.allSatisfy(HTTPSyntax.isTokenCharacter) else { return nil }
                return String(decoding: content, as: UTF8.self)
            }
            if byte == ASCII.backslash {
                guard index < bytes.count else { return nil }
                byte = bytes[index]
                index += 1
            }
            content.append(byte)
        }
        return nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, HTTPSyntax.isWhitespace(bytes[index]) { index += 1 }
    }
}
