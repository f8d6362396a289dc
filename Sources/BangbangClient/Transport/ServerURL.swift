// `ws://host:port/path` and `wss://…`: the addresses a connection can be given.

/// Where the server's WebSocket endpoint is.
public struct ServerURL: Hashable, Sendable, CustomStringConvertible {
    public var isSecure: Bool
    /// A name or a literal address, without IPv6 brackets.
    public var host: String
    public var port: Int
    /// Origin-form request target, starting with "/".
    public var path: String

    public init(isSecure: Bool, host: String, port: Int, path: String = "/ws") {
        precondition(!host.isEmpty && (1...65535).contains(port) && path.hasPrefix("/"), "not a WebSocket address")
        self.isSecure = isSecure
        self.host = host
        self.port = port
        self.path = path
    }

    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads `ws://HOST[:PORT][/PATH]` or `wss://…`; `[::1]` for IPv6. The path defaults to `/`.
    public init(parsing text: String) throws(ParseError) {
        let rest: Substring
        if text.hasPrefix("ws://") {
            isSecure = false
            rest = text.dropFirst(5)
        } else if text.hasPrefix("wss://") {
            isSecure = true
            rest = text.dropFirst(6)
        } else {
            throw ParseError(description: "'\(text)' is not a ws:// or wss:// URL")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var target = String(rest.dropFirst(authority.count))
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if target.isEmpty { target = "/" }
        if target.hasPrefix("?") { target = "/" + target }
        guard target.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ParseError(description: "the path of '\(text)' may hold only visible ASCII characters")
        }
        path = target
        guard !authority.isEmpty, !authority.contains("@") else {
            throw ParseError(description: "'\(text)' needs a host (and no user info)")
        }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw ParseError(description: "unterminated [IPv6] address in '\(text)'")
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw ParseError(description: "unexpected text after ] in '\(text)'") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty, host.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ParseError(description: "'\(text)' needs a host")
        }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw ParseError(description: "the port of '\(text)' must be a number from 1 to 65535")
            }
            port = number
        } else {
            port = isSecure ? 443 : 80
        }
    }

    /// The `Host` header: the authority, with brackets and a non-default port.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// 127.0.0.0/8, ::1 or `localhost`: the server's own machine.
    public var isLoopback: Bool { host == "localhost" || host.hasPrefix("127.") || host == "::1" }

    public var description: String { "\(isSecure ? "wss" : "ws")://\(hostHeader)\(path)" }
}
