import Crypto

/// Why a client refused the server's handshake response.
public enum ClientHandshakeError: Error, Hashable, Sendable {
    /// The response head itself broke HTTP/1.1 syntax or our limits.
    case malformedResponse(HTTPParseError)
    /// Anything but 101 (the server refused, or is no WebSocket server).
    case unexpectedStatus(Int)
    /// `Upgrade` does not name websocket (RFC 6455 §4.1, client step 2).
    case missingUpgradeWebSocket
    /// `Connection` does not include upgrade (step 3).
    case missingConnectionUpgrade
    /// `Sec-WebSocket-Accept` absent or not derived from our key (step 4).
    case wrongAcceptValue
    /// The server selected a subprotocol we did not offer, or several (step 6).
    case unofferedSubprotocol(String)
    /// The server answered with an extension we did not offer, or more than one (step 5).
    case unofferedExtension(String)
    /// `Sec-WebSocket-Extensions` in the response breaks the RFC 6455 §9.1 or RFC 7692 grammar.
    case malformedExtensionResponse
    /// A well-formed permessage-deflate answer that contradicts our offer or that we cannot honour.
    case extensionResponseMismatch(String)
}

/// What a completed client handshake agreed.
public struct ClientHandshakeResult: Sendable, Hashable {
    public var subprotocol: String?
    public var deflate: DeflateParameters?
    /// Bytes that followed the response head in the last input: the server's first frames.
    public var unconsumedBytes: [UInt8]
}

/// The client half of the opening handshake, for tests and the load-test driver: it builds the
/// request, then reads the response incrementally and checks it (RFC 6455 §4.1).
///
/// One value per connection, used from that connection's queue.
public struct ClientHandshake: Sendable {
    public enum Progress: Sendable, Hashable {
        case needsMoreData
        case established(ClientHandshakeResult)
    }

    /// Our `Sec-WebSocket-Key`.
    public let key: String
    /// The request to write, complete.
    public let requestBytes: [UInt8]
    public let subprotocols: [String]
    public let deflateOffer: DeflateOffer?
    private var parser: HTTPResponseParser

    /// - Parameters:
    ///   - host: the `Host` value, e.g. "localhost:8080".
    ///   - path: an origin-form target ("/ws?x=1").
    ///   - extraHeaders: appended after the handshake fields (Origin, Authorization, …).
    ///   - generator: source of the 16 key bytes; pass a seeded one in tests.
    public init(host: String, path: String, subprotocols: [String] = [], deflate: DeflateOffer? = nil,
                extraHeaders: HTTPHeaders = [:], limits: HTTPParserLimits = HTTPParserLimits(),
                using generator: inout some RandomNumberGenerator) {
        precondition(!host.isEmpty && host.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "host must be visible ASCII")
        precondition(path.hasPrefix("/") && path.utf8.allSatisfy { (0x21...0x7E).contains($0) },
                     "path must be an origin-form request target")
        precondition(subprotocols.allSatisfy(HTTPSyntax.isToken), "subprotocols must be tokens")
        var keyBytes: [UInt8] = []
        keyBytes.reserveCapacity(16)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) { keyBytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        key = Base64.encode(keyBytes)
        self.subprotocols = subprotocols
        deflateOffer = deflate

        var headers: HTTPHeaders = ["Host": host, "Upgrade": "websocket", "Connection": "Upgrade"]
        headers.append(name: "Sec-WebSocket-Key", value: key)
        headers.append(name: "Sec-WebSocket-Version", value: WebSocketHandshake.version)
        if !subprotocols.isEmpty {
            headers.append(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", "))
        }
        if let deflate { headers.append(name: "Sec-WebSocket-Extensions", value: deflate.headerValue) }
        for field in extraHeaders { headers.append(name: field.name, value: field.value) }

        var request = Array("GET \(path) HTTP/1.1\r\n".utf8)
        for field in headers { request += Array("\(field.name): \(field.value)\r\n".utf8) }
        request += Array("\r\n".utf8)
        requestBytes = request
        parser = HTTPResponseParser(limits: limits)
    }

    /// Feeds response bytes in any pieces. On completion the head is validated and the bytes
    /// after it are returned in the result. Call it until it establishes or throws; calling it
    /// after `.established` is a programming error.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(ClientHandshakeError) -> Progress {
        let progress: HTTPParseProgress<HTTPResponseHead>
        do {
            progress = try parser.parse(bytes)
        } catch {
            throw .malformedResponse(error)
        }
        switch progress {
        case .needsMoreData:
            return .needsMoreData
        case .complete(let head, let consumed):
            var result = try validate(head)
            result.unconsumedBytes = Array(bytes.dropFirst(consumed))
            return .established(result)
        }
    }

    /// Checks a complete response head against this handshake's offer (RFC 6455 §4.1 steps 1–6).
    public func validate(_ head: HTTPResponseHead) throws(ClientHandshakeError) -> ClientHandshakeResult {
        let headers = head.headers
        guard head.status == 101 else { throw .unexpectedStatus(head.status) }
        guard headers.containsToken("websocket", named: "Upgrade") else { throw .missingUpgradeWebSocket }
        guard headers.containsToken("upgrade", named: "Connection") else { throw .missingConnectionUpgrade }
        let accepts = headers.values(named: "Sec-WebSocket-Accept")
        guard accepts.count == 1, accepts[0] == WebSocketHandshake.acceptValue(forKey: key) else {
            throw .wrongAcceptValue
        }

        var subprotocol: String?
        let chosen = headers.listElements(named: "Sec-WebSocket-Protocol")
        if let first = chosen.first {
            guard chosen.count == 1, subprotocols.contains(String(first)) else {
                throw .unofferedSubprotocol(chosen.joined(separator: ", "))
            }
            subprotocol = String(first)
        }

        var deflate: DeflateParameters?
        guard let extensions = WebSocketExtension.parseList(in: headers) else { throw .malformedExtensionResponse }
        if let answer = extensions.first {
            guard extensions.count == 1, let offer = deflateOffer,
                  HTTPSyntax.equalsIgnoringCase(answer.name, PermessageDeflate.extensionName)
            else { throw .unofferedExtension(extensions.map(\.name).joined(separator: ", ")) }
            deflate = try PermessageDeflate.validate(response: answer, offer: offer)
        }
        return ClientHandshakeResult(subprotocol: subprotocol, deflate: deflate, unconsumedBytes: [])
    }
}
