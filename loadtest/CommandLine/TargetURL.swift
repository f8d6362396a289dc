// `ws://host:port/path` and `wss://…`, the only addresses the driver connects to.

struct TargetURL: Equatable, Sendable, CustomStringConvertible {
    var isSecure: Bool
    /// A name or a numeric address, without IPv6 brackets.
    var host: String
    var port: Int
    /// Origin-form request target, always starting with "/".
    var path: String

    /// The `Host` header: the authority as written, with brackets and a non-default port.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// True for 127.0.0.0/8 and `localhost`: only then can connections be bound to other
    /// loopback source addresses.
    var isIPv4Loopback: Bool { host == "localhost" || host.hasPrefix("127.") }

    var description: String { "\(isSecure ? "wss" : "ws")://\(hostHeader)\(path)" }

    enum ParseError: Error, Equatable { case invalid(String) }

    init(isSecure: Bool, host: String, port: Int, path: String) {
        self.isSecure = isSecure
        self.host = host
        self.port = port
        self.path = path
    }

    init(parsing text: String) throws(ParseError) {
        let rest: Substring
        if text.hasPrefix("ws://") {
            isSecure = false
            rest = text.dropFirst(5)
        } else if text.hasPrefix("wss://") {
            isSecure = true
            rest = text.dropFirst(6)
        } else {
            throw .invalid("the URL must start with ws:// or wss://")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var target = String(rest.dropFirst(authority.count))
        if let fragment = target.firstIndex(of: "#") { target = String(target[..<fragment]) }
        if target.isEmpty { target = "/" }
        if target.hasPrefix("?") { target = "/" + target }
        guard target.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalid("the path may contain only visible ASCII characters")
        }
        path = target
        guard !authority.isEmpty, !authority.contains("@") else { throw .invalid("the URL needs a host (and no user info)") }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalid("unterminated [IPv6] address") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalid("unexpected text after ]") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw .invalid("the URL needs a host") }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                throw .invalid("the port must be a number from 1 to 65535")
            }
            port = number
        } else {
            port = isSecure ? 443 : 80
        }
    }
}
