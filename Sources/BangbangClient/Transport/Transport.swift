// The small seam between the connection logic and the bytes: open a WebSocket, send text,
// ping, close, and hear what arrives. Two implementations: `SocketTransport` (Linux: the
// project's own sockets, TLS and WebSocket state machine) and `URLSessionTransport` (Apple
// platforms). Tests wrap one to cut connections from outside.

/// What it takes to reach the server.
public struct ServerEndpoint: Sendable, Hashable {
    public var url: ServerURL
    /// PEM files whose certificates are trusted for `wss://` (a test CA, a self-signed server
    /// certificate), besides the system trust store when `usesSystemTrustStore`.
    public var trustedCertificatePaths: [String]
    /// Trust the system's certificate authorities (the default). Off with a private CA, so a
    /// certificate from any public CA for the same name is not accepted.
    public var usesSystemTrustStore: Bool
    /// The name the server's certificate must carry, when it is not the URL's host: a server
    /// reached by a loopback address with a certificate for its public name.
    public var serverName: String?
    /// Bound on TCP connect, TLS and the WebSocket handshake together.
    public var connectTimeout: Duration

    public init(url: ServerURL, trustedCertificatePaths: [String] = [], usesSystemTrustStore: Bool = true,
                serverName: String? = nil, connectTimeout: Duration = .seconds(10)) {
        self.url = url
        self.trustedCertificatePaths = trustedCertificatePaths
        self.usesSystemTrustStore = usesSystemTrustStore
        self.serverName = serverName
        self.connectTimeout = connectTimeout
    }
}

/// Why a WebSocket could not be opened or broke.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Something that happened on an open channel. `.closed` is the last event.
public enum TransportEvent: Sendable, Hashable {
    /// A text message (UTF-8 bytes).
    case text([UInt8])
    /// The answer to a ping.
    case pong
    /// The channel is over: the server closed it (with `code`), the network dropped it (nil
    /// code), or we closed it.
    case closed(code: UInt16?, reason: String)
}

/// Opens WebSocket channels.
public protocol WebSocketTransport: Sendable {
    /// Connects, completes TLS and the WebSocket handshake, and returns the open channel.
    func connect(to endpoint: ServerEndpoint) async throws(TransportError) -> any TransportChannel
}

/// One open WebSocket. Calls may come from any task; sends are delivered in call order.
public protocol TransportChannel: AnyObject, Sendable {
    /// Everything the channel receives, ending with `.closed`. One consumer.
    var events: AsyncStream<TransportEvent> { get }
    func send(text: [UInt8])
    func ping()
    /// Starts an orderly close (code 1000); `.closed` follows.
    func close()
    /// Drops the connection at once, without a close handshake (a dead network).
    func abort()
}
