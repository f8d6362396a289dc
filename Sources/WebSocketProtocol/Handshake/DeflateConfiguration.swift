/// How the server answers permessage-deflate offers (RFC 7692).
public struct DeflateConfiguration: Sendable, Hashable {
    /// Whether to accept permessage-deflate at all. Default true: chat-like JSON compresses
    /// several-fold, which matters on campus mobile networks.
    public var isEnabled: Bool
    /// The largest LZ77 window the server compresses with, 9...15. Default 15 (zlib's
    /// maximum, best ratio). 8 is not allowed: zlib silently compresses with a 9-bit window
    /// when asked for 8, which would break a peer that trusted "8"; for the same reason an
    /// offer that caps the server at `server_max_window_bits=8` is declined.
    public var serverMaxWindowBits: Int
    /// Add `server_no_context_takeover` to every acceptance even when not asked. Default true:
    /// the server then holds no compressor state between messages, which keeps an idle
    /// compressed connection under 16 KiB and lets one compressed broadcast frame serve every
    /// subscriber.
    public var requestsServerNoContextTakeover: Bool
    /// Add `client_no_context_takeover` to every acceptance. Default true: the server's
    /// decompressor then needs no window kept between messages either.
    public var requestsClientNoContextTakeover: Bool

    public init(isEnabled: Bool = true, serverMaxWindowBits: Int = 15,
                requestsServerNoContextTakeover: Bool = true, requestsClientNoContextTakeover: Bool = true) {
        precondition((9...15).contains(serverMaxWindowBits), "serverMaxWindowBits must be 9...15 (zlib cannot compress with 8)")
        self.isEnabled = isEnabled
        self.serverMaxWindowBits = serverMaxWindowBits
        self.requestsServerNoContextTakeover = requestsServerNoContextTakeover
        self.requestsClientNoContextTakeover = requestsClientNoContextTakeover
    }

    /// permessage-deflate refused.
    public static let disabled = DeflateConfiguration(isEnabled: false)
}

/// What a client offers for permessage-deflate (RFC 7692 §5, §7.1).
public struct DeflateOffer: Sendable, Hashable {
    /// Send `server_no_context_takeover`; the server must then agree or the handshake fails.
    public var requestsServerNoContextTakeover: Bool
    /// Send the `client_no_context_takeover` hint: we reset our compressor after every message.
    public var requestsClientNoContextTakeover: Bool
    /// Send `server_max_window_bits=N` (8...15) to cap the server's window; nil sends nothing.
    public var serverMaxWindowBits: Int?
    /// Send `client_max_window_bits` without a value, letting the server cap our window.
    /// Default false: a cap of 8 could not be honoured by zlib, so it would fail the handshake.
    public var offersClientMaxWindowBits: Bool

    public init(requestsServerNoContextTakeover: Bool = false, requestsClientNoContextTakeover: Bool = false,
                serverMaxWindowBits: Int? = nil, offersClientMaxWindowBits: Bool = false) {
        if let serverMaxWindowBits {
            precondition((8...15).contains(serverMaxWindowBits), "server_max_window_bits must be 8...15")
        }
        self.requestsServerNoContextTakeover = requestsServerNoContextTakeover
        self.requestsClientNoContextTakeover = requestsClientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.offersClientMaxWindowBits = offersClientMaxWindowBits
    }

    /// The offer as an extension-list element.
    public var headerValue: String {
        PermessageDeflate.extensionElement(
            serverNoContextTakeover: requestsServerNoContextTakeover,
            clientNoContextTakeover: requestsClientNoContextTakeover,
            serverMaxWindowBits: serverMaxWindowBits,
            clientMaxWindowBits: offersClientMaxWindowBits ? .withoutValue : .absent).headerValue
    }
}
