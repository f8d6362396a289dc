// Everything a connection can be told, with a reason for each default.

/// The settings of one `BangbangConnection`.
public struct ConnectionConfiguration: Sendable {
    /// The server and how to trust it.
    public var endpoint: ServerEndpoint
    /// How long a request waits for the connection to be ready, and then for its reply.
    /// Default 10 s: a publish waits for the server's disk, which takes milliseconds; ten seconds
    /// without an answer means the network is gone, and the app should say so.
    public var requestTimeout: Duration
    /// How often the connection pings the server; a ping still unanswered at the next one (and no
    /// other message meanwhile) means the connection is dead, and it is dropped and remade.
    /// Default 15 s: half the server's own 30 s, so a silent network failure is noticed within
    /// 30 s, while an idle phone sends one small frame every 15 s.
    public var pingInterval: Duration
    /// Waits between reconnection attempts.
    public var backoff: ReconnectBackoff
    /// Sent with logins and shown in `auth.sessions` ("iPhone 15"). nil: none.
    public var deviceName: String?

    public init(endpoint: ServerEndpoint, requestTimeout: Duration = .seconds(10), pingInterval: Duration = .seconds(15),
                backoff: ReconnectBackoff = ReconnectBackoff(), deviceName: String? = nil) {
        precondition(requestTimeout > .zero && pingInterval > .zero, "timeouts must be positive")
        self.endpoint = endpoint
        self.requestTimeout = requestTimeout
        self.pingInterval = pingInterval
        self.backoff = backoff
        self.deviceName = deviceName
    }

    /// A configuration for `url` (ws:// or wss://) with the defaults above.
    public init(url: ServerURL) {
        self.init(endpoint: ServerEndpoint(url: url))
    }
}

/// Where the connection is with the server.
public enum ConnectionState: Sendable, Hashable {
    /// Not started, or stopped by `disconnect()`.
    case stopped
    /// Opening a WebSocket and resuming the session; `attempt` counts since the last success.
    case connecting(attempt: Int)
    /// Ready: requests go out now.
    case online
    /// The last attempt failed (or the connection dropped); the next one starts after `delay`.
    case waiting(delay: Duration, reason: String)
}

/// Why the session ended; show the login screen.
public enum LogoutReason: Sendable, Hashable {
    /// This connection logged out (`LogOut`).
    case loggedOut
    /// The session was logged out elsewhere (another device, `RevokeSession`).
    case revoked
    /// Thirty days passed since the login.
    case expired
    /// The server does not know the token (a different server, a reset secret).
    case rejected
}
