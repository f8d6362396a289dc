// Everything a NATS connection can be told, with the reason for each default.
import NATSProtocol

/// Where a NATS server listens.
public struct NATSServerAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `nats://host:port`, `host:port` or `host` (port 4222). IPv6 hosts go in brackets.
    public init?(url: String) {
        var rest = Substring(url)
        if rest.hasPrefix("nats://") { rest = rest.dropFirst(7) }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host = rest
        var port = 4222
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()) else { return nil }
                port = value
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = value
        }
        guard !host.isEmpty, (1...65_535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "nats://[\(host)]:\(port)" : "nats://\(host):\(port)" }
}

/// A connection's settings. One documented value per knob; the defaults suit a server process
/// talking to a NATS cluster on its own network.
public struct NATSConfiguration: Sendable {
    /// The cluster's servers, tried in order; servers the cluster announces (`connect_urls` in
    /// INFO) are added to the list as they become known.
    public var servers: [NATSServerAddress]
    /// What the client says about itself (name, credentials).
    public var connect: ConnectOptions
    /// Bound on TCP connect plus INFO, CONNECT and the first PONG. Two seconds: on a LAN a
    /// healthy server answers in well under a millisecond, and failover must not wait long.
    public var connectTimeoutMilliseconds: Int64 = 2_000
    /// A request with no reply within this is failed with `.timeout`. Five seconds, JetStream's
    /// own API timeout.
    public var requestTimeoutMilliseconds = 5_000
    /// How often the client PINGs an idle server; with `maxPingsOutstanding` unanswered the
    /// connection is declared stale and replaced. Five seconds × 2: a half-open connection
    /// (a server host that vanished without a RST) is noticed within about ten seconds.
    public var pingIntervalMilliseconds = 5_000
    public var maxPingsOutstanding = 2
    /// The first wait after a whole round of servers failed; doubled each round up to the
    /// maximum, with up to half of it added as jitter so a fleet does not reconnect in step.
    public var reconnectWaitMilliseconds = 100
    public var maxReconnectWaitMilliseconds = 2_000
    /// Whether the servers a server announces (`connect_urls`, the rest of its cluster) join the
    /// ones to reconnect to. Off, the client only ever connects to `servers`.
    public var usesAnnouncedServers = true
    /// Commands queued and not yet written (including while reconnecting). Past it `publish`
    /// fails with `.outputBufferFull` instead of growing without bound. 32 MiB.
    public var pendingLimitBytes = 32 * 1024 * 1024
    /// The socket's write queue above which queued commands wait in the pending buffer instead.
    public var socketHighWaterBytes = 1024 * 1024
    /// Limits on what the server may send; `maxPayloadBytes` is lowered to the server's
    /// announced `max_payload`.
    public var parserLimits = ParserLimits()

    public init(servers: [NATSServerAddress], name: String = "bangbang") {
        precondition(!servers.isEmpty, "a NATS connection needs at least one server")
        self.servers = servers
        connect = ConnectOptions(name: name)
    }
}
