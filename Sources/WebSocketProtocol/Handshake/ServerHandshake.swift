// The WebSocket opening handshake (RFC 6455 §4, RFC 7692 §5–§7) — theory of operation.
//
// Everything here is sans-I/O: bytes and parsed values in, values and bytes out. No sockets,
// no clocks; the only randomness (the client's key) comes in as a generator.
//
// Server side, one connection:
//
//     bytes ──► HTTPRequestParser.parse ──► HTTPRequestHead ──► ServerHandshake.evaluate
//                 │ needsMoreData: feed more           │          │
//                 │ throws HTTPParseError:             │          ├─ .upgrade: write responseBytes,
//                 │   write error.response, close      │          │   hand the unconsumed bytes and
//                 └ complete(head, consumedBytes) ─────┘          │   the negotiated values to the
//                                                                 │   frame layer
//                                                                 ├─ .reject(response): write, close
//                                                                 └─ .notWebSocket: the caller answers
//                                                                     it as plain HTTP (/healthz …)
//
// The parser is a byte-at-a-time state machine (HTTPHeadParser) that stops at the blank line
// ending the head: bytes after it — a pipelining client's first frame — are never examined,
// only counted as unconsumed. Limits (HTTPParserLimits) fail on the exact byte that crosses
// them, so a hostile peer costs at most those bounds.
//
// `evaluate` is a pure function of the head and a ServerHandshakeConfiguration. A request is a
// WebSocket attempt when it asks to upgrade to "websocket" or carries Sec-WebSocket-Key or
// Sec-WebSocket-Version; anything else is plain HTTP (an `Upgrade: h2c` we simply ignore, as
// RFC 9110 §7.8 allows). An attempt is checked in RFC 6455 §4.2.1 order; the first failure
// decides the rejection (400 with a reason, 426 for a version other than 13, 403 for a refused
// Origin). Path routing is the caller's job and happens before or after, as it likes.
//
// Negotiation: the subprotocol is the first of the server's list (its preference order) that
// the client offered; none in common means no Sec-WebSocket-Protocol and the client decides.
// permessage-deflate takes the first acceptable offer (PermessageDeflateNegotiation.swift);
// offers with unknown, repeated or invalid parameters are skipped, as RFC 7692 §5 requires.
//
// Client side (tests, load-test driver) mirrors this: ClientHandshake makes the request bytes,
// then feeds response bytes through HTTPResponseParser and checks the 101 against what it
// offered, returning the negotiated values and the bytes left after the head.
//
// Threading: every type here is a value; a parser is owned by one connection and used from
// that connection's serial queue. `evaluate` and the configuration are safe anywhere.

import Crypto

/// Constants of the opening handshake (RFC 6455 §1.3, §4.2.2).
public enum WebSocketHandshake {
    /// The only protocol version we speak (RFC 6455 §4.1 item 9).
    public static let version = "13"
    /// Appended to the client's key before hashing (RFC 6455 §1.3).
    public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)) (RFC 6455 §4.2.2 item 5.4).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(Digest.sha1(Array((key + acceptGUID).utf8)))
    }

    /// Whether `key` is the canonical base64 of exactly 16 bytes (RFC 6455 §4.1 item 7):
    /// 24 characters of the standard alphabet ending in "==".
    public static func isValidKey(_ key: String) -> Bool {
        guard key.utf8.count == 24, key.hasSuffix("=="),
              !key.utf8.contains(where: { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }),
              let decoded = Base64.decode(key), decoded.count == 16
        else { return false }
        return Base64.encode(decoded) == key
    }
}

/// A successful upgrade: what to write and what was agreed.
public struct WebSocketUpgrade: Sendable, Hashable {
    /// The 101 response.
    public var response: HTTPResponse
    /// `response` serialized: write exactly these bytes, then start the frame layer.
    public var responseBytes: [UInt8]
    /// The subprotocol selected from the client's offer, if any.
    public var subprotocol: String?
    /// The permessage-deflate parameters in force, or nil when messages go uncompressed.
    public var deflate: DeflateParameters?
}

/// The server's verdict on a request head.
public enum ServerHandshakeDecision: Sendable, Hashable {
    case upgrade(WebSocketUpgrade)
    /// A WebSocket attempt we refuse: write the response and close.
    case reject(HTTPResponse)
    /// A plain HTTP request; the caller answers it.
    case notWebSocket
}

public enum ServerHandshake {
    /// Decides what to do with a parsed request head. Pure; callable from any thread.
    public static func evaluate(_ head: HTTPRequestHead, configuration: ServerHandshakeConfiguration) -> ServerHandshakeDecision {
        let headers = head.headers
        let asksForWebSocket = headers.containsToken("websocket", named: "Upgrade")
        guard asksForWebSocket || headers.contains(name: "Sec-WebSocket-Key")
                || headers.contains(name: "Sec-WebSocket-Version")
        else { return .notWebSocket }

        func reject(_ status: Int, _ reason: String) -> ServerHandshakeDecision {
            .reject(HTTPResponse.rejection(status: status, reason: reason))
        }

        guard head.version == .http1_1 else { return reject(400, "WebSocket upgrade requires HTTP/1.1") }
        guard head.method == "GET" else { return reject(400, "WebSocket upgrade requires GET") }
        let hosts = headers.values(named: "Host")
        guard hosts.count == 1, !hosts[0].isEmpty else {
            return reject(400, hosts.isEmpty ? "missing Host" : "exactly one non-empty Host is required")
        }
        guard asksForWebSocket else { return reject(400, "Upgrade must include websocket") }
        guard headers.containsToken("upgrade", named: "Connection") else {
            return reject(400, "Connection must include upgrade")
        }
        guard headers.combinedValue(named: "Sec-WebSocket-Version") == WebSocketHandshake.version else {
            return reject(426, "only WebSocket version 13 is supported")
        }
        let keys = headers.values(named: "Sec-WebSocket-Key")
        guard keys.count == 1, WebSocketHandshake.isValidKey(keys[0]) else {
            return reject(400, "Sec-WebSocket-Key must be one base64-encoded 16-byte value")
        }
        let origins = headers.values(named: "Origin")
        guard origins.count <= 1 else { return reject(400, "more than one Origin") }
        let isOwnOrigin = configuration.allowsOwnOrigin && origins.first.map { Self.origin($0, names: hosts[0]) } == true
        guard isOwnOrigin || configuration.originPolicy(origins.first) else { return reject(403, "origin not allowed") }

        let offeredSubprotocols = headers.listElements(named: "Sec-WebSocket-Protocol")
        guard offeredSubprotocols.allSatisfy(HTTPSyntax.isToken) else {
            return reject(400, "Sec-WebSocket-Protocol must be a list of tokens")
        }
        let subprotocol = configuration.subprotocols.first { supported in
            offeredSubprotocols.contains { $0 == supported }
        }
        guard let extensionOffers = WebSocketExtension.parseList(in: headers) else {
            return reject(400, "malformed Sec-WebSocket-Extensions")
        }
        let deflate = PermessageDeflate.negotiate(offers: extensionOffers, configuration: configuration.deflate)

        var responseHeaders: HTTPHeaders = ["Upgrade": "websocket", "Connection": "Upgrade"]
        responseHeaders.append(name: "Sec-WebSocket-Accept", value: WebSocketHandshake.acceptValue(forKey: keys[0]))
        if let subprotocol { responseHeaders.append(name: "Sec-WebSocket-Protocol", value: subprotocol) }
        if let deflate { responseHeaders.append(name: "Sec-WebSocket-Extensions", value: deflate.response.headerValue) }
        let response = HTTPResponse(status: 101, headers: responseHeaders)
        return .upgrade(WebSocketUpgrade(response: response, responseBytes: response.serialized(),
                                         subprotocol: subprotocol, deflate: deflate?.parameters))
    }

    /// Whether a serialized origin ("https://campus.example:8443") has `host` (the request's
    /// Host field) as its authority: the page making the request was served by this server.
    /// The scheme is not compared, because behind a TLS-terminating proxy the server sees plain
    /// HTTP for an https page.
    static func origin(_ origin: String, names host: String) -> Bool {
        let bytes = Array(origin.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else {
            return false
        }
        return HTTPSyntax.equalsIgnoringCase(String(decoding: bytes[(colon + 3)...], as: UTF8.self), host)
    }
}
