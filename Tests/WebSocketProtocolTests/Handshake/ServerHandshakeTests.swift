import Testing
@testable import WebSocketProtocol

@Suite struct ServerHandshakeTests {
    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// A valid upgrade request with `changes` applied: nil removes a field, a value replaces it.
    func head(method: String = "GET", version: HTTPVersion = .http1_1,
              _ changes: [(String, String?)] = [], extra: [(String, String)] = []) -> HTTPRequestHead {
        var fields: [(String, String)] = [("Host", "server.example.com"), ("Upgrade", "websocket"),
                                          ("Connection", "Upgrade"), ("Sec-WebSocket-Key", Self.sampleKey),
                                          ("Sec-WebSocket-Version", "13")]
        for (name, value) in changes {
            if let index = fields.firstIndex(where: { $0.0 == name }) {
                if let value { fields[index].1 = value } else { fields.remove(at: index) }
            } else if let value {
                fields.append((name, value))
            }
        }
        var headers = HTTPHeaders()
        for (name, value) in fields + extra { headers.append(name: name, value: value) }
        return HTTPRequestHead(method: method, target: "/ws", version: version, headers: headers)
    }

    func evaluate(_ head: HTTPRequestHead,
                  _ configuration: ServerHandshakeConfiguration = ServerHandshakeConfiguration()) -> ServerHandshakeDecision {
        ServerHandshake.evaluate(head, configuration: configuration)
    }

    func expectRejection(_ decision: ServerHandshakeDecision, status: Int,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .reject(let response) = decision else {
            Issue.record("expected \(status), got \(decision)", sourceLocation: sourceLocation)
            return
        }
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.headers["Connection"] == "close", sourceLocation: sourceLocation)
        #expect(!response.body.isEmpty, sourceLocation: sourceLocation)
    }

    func upgrade(_ decision: ServerHandshakeDecision, sourceLocation: SourceLocation = #_sourceLocation) -> WebSocketUpgrade? {
        guard case .upgrade(let upgrade) = decision else {
            Issue.record("expected an upgrade, got \(decision)", sourceLocation: sourceLocation)
            return nil
        }
        return upgrade
    }

    @Test func acceptValueMatchesRFC6455Example() {
        #expect(WebSocketHandshake.acceptValue(forKey: Self.sampleKey) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func upgradesTheRFCExampleWithExactResponseBytes() throws {
        let result = try #require(upgrade(evaluate(head([], extra: [("Sec-WebSocket-Extensions", "x-unknown")]))))
        #expect(String(decoding: result.responseBytes, as: UTF8.self) == """
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            \r

            """)
        #expect(result.subprotocol == nil)
        #expect(result.deflate == nil)
        #expect(result.responseBytes == result.response.serialized())
    }

    @Test func parsedRequestUpgradesEndToEnd() throws {
        let parsed = try #require(verifyHeadDripFeed(HTTPRequestParser.self, bytes(HTTPRequestParserTests.browserRequest)).head)
        let configuration = ServerHandshakeConfiguration(subprotocols: ["superchat", "chat"],
                                                         originPolicy: { $0 == "http://example.com" })
        let result = try #require(upgrade(evaluate(parsed, configuration)))
        #expect(result.subprotocol == "superchat")
        #expect(result.response.headers["Sec-WebSocket-Protocol"] == "superchat")
    }

    @Test func headerNamesAndTokensAreCaseInsensitive() throws {
        var headers = HTTPHeaders()
        for (name, value) in [("host", "h"), ("UPGRADE", "WebSocket"), ("connection", "keep-alive, UPGRADE"),
                              ("sec-websocket-key", Self.sampleKey), ("SEC-WEBSOCKET-VERSION", "13")] {
            headers.append(name: name, value: value)
        }
        #expect(upgrade(evaluate(HTTPRequestHead(method: "GET", target: "/", headers: headers))) != nil)
    }

    @Test func connectionTokenMayBeInARepeatedField() {
        let decision = evaluate(head([("Connection", "keep-alive")], extra: [("Connection", "Upgrade")]))
        #expect(upgrade(decision) != nil)
    }

    @Test func plainRequestsAreNotWebSocket() {
        let plain = HTTPRequestHead(method: "GET", target: "/healthz", headers: ["Host": "h"])
        #expect(evaluate(plain) == .notWebSocket)
        let h2c = HTTPRequestHead(method: "GET", target: "/", headers: ["Host": "h", "Upgrade": "h2c", "Connection": "Upgrade"])
        #expect(evaluate(h2c) == .notWebSocket)
        let post = HTTPRequestHead(method: "POST", target: "/", headers: ["Host": "h"])
        #expect(evaluate(post) == .notWebSocket)
    }

    @Test func rejectsHTTP10Upgrade() {
        expectRejection(evaluate(head(version: .http1_0)), status: 400)
    }

    @Test func rejectsMethodsOtherThanGET() {
        expectRejection(evaluate(head(method: "POST")), status: 400)
        expectRejection(evaluate(head(method: "HEAD")), status: 400)
        expectRejection(evaluate(head(method: "get")), status: 400)
    }

    @Test func rejectsMissingOrRepeatedHost() {
        expectRejection(evaluate(head([("Host", nil)])), status: 400)
        expectRejection(evaluate(head([("Host", "")])), status: 400)
        expectRejection(evaluate(head([], extra: [("Host", "other")])), status: 400)
    }

    @Test func rejectsUpgradeWithoutWebSocketToken() {
        expectRejection(evaluate(head([("Upgrade", "h2c")])), status: 400)
        expectRejection(evaluate(head([("Upgrade", nil)])), status: 400)
        expectRejection(evaluate(head([("Upgrade", "websockets")])), status: 400)
    }

    @Test func rejectsConnectionWithoutUpgradeToken() {
        expectRejection(evaluate(head([("Connection", "keep-alive")])), status: 400)
        expectRejection(evaluate(head([("Connection", nil)])), status: 400)
        expectRejection(evaluate(head([("Connection", "upgraded")])), status: 400)
    }

    @Test func rejectsOtherVersionsWith426AndSupportedVersion() throws {
        for version in ["8", "12", "14", "13, 8", "", " 13x"] {
            let decision = evaluate(head([("Sec-WebSocket-Version", version)]))
            expectRejection(decision, status: 426)
            if case .reject(let response) = decision {
                #expect(response.headers["Sec-WebSocket-Version"] == "13")
            }
        }
        expectRejection(evaluate(head([("Sec-WebSocket-Version", nil)])), status: 426)
        expectRejection(evaluate(head([], extra: [("Sec-WebSocket-Version", "13")])), status: 426)
    }

    @Test func rejectsBadKeys() {
        let badKeys = [
            "",
            "dGhlIHNhbXBsZSBub25jZQ",            // unpadded
            "dGhlIHNhbXBsZSBub25jZQ=",           // wrong padding
            "dGhlIHNhbXBsZSBub25jZQ===",
            "dGhlIHNhbXBsZSBub25jZSE=",          // 17 bytes
            "dGhlIHNhbXBsZSBub25j",              // 15 bytes
            "dGhlIHNhbXBsZSBub25jZR==",          // non-canonical trailing bits
            "dGhl-HNhbXBsZSBub25jZQ==",          // URL-safe alphabet
            "dGhlIHNhbXBsZSBub25j*Q==",
        ]
        for key in badKeys {
            expectRejection(evaluate(head([("Sec-WebSocket-Key", key)])), status: 400)
        }
        expectRejection(evaluate(head([("Sec-WebSocket-Key", nil)])), status: 400)
        expectRejection(evaluate(head([], extra: [("Sec-WebSocket-Key", Self.sampleKey)])), status: 400)
    }

    @Test func keyValidationAcceptsAnySixteenBytes() {
        #expect(WebSocketHandshake.isValidKey("AAAAAAAAAAAAAAAAAAAAAA=="))
        #expect(WebSocketHandshake.isValidKey("/////////////////////w=="))
    }

    @Test func originPolicyDecides() {
        let configuration = ServerHandshakeConfiguration(
            originPolicy: ServerHandshakeConfiguration.allowingOrigins(["https://bangbang.example"], allowingMissing: false))
        expectRejection(evaluate(head([("Origin", "https://evil.example")]), configuration), status: 403)
        expectRejection(evaluate(head(), configuration), status: 403)
        #expect(upgrade(evaluate(head([("Origin", "HTTPS://bangbang.example")]), configuration)) != nil)
        expectRejection(evaluate(head([("Origin", "https://bangbang.example")],
                                      extra: [("Origin", "https://bangbang.example")]), configuration), status: 400)
    }

    @Test func ownOriginPassesAnAllowListThatDoesNotNameIt() {
        let configuration = ServerHandshakeConfiguration(
            originPolicy: ServerHandshakeConfiguration.allowingOrigins(["https://other.example"], allowingMissing: true))
        #expect(upgrade(evaluate(head([("Origin", "http://server.example.com")]), configuration)) != nil)
        #expect(upgrade(evaluate(head([("Origin", "https://SERVER.example.com")]), configuration)) != nil)
        expectRejection(evaluate(head([("Origin", "http://server.example.com:8080")]), configuration), status: 403)
        expectRejection(evaluate(head([("Origin", "http://server.example.com.evil.example")]), configuration), status: 403)
        expectRejection(evaluate(head([("Origin", "server.example.com")]), configuration), status: 403)
        expectRejection(evaluate(head([("Origin", "null")]), configuration), status: 403)
        var strict = configuration
        strict.allowsOwnOrigin = false
        expectRejection(evaluate(head([("Origin", "http://server.example.com")]), strict), status: 403)
    }

    @Test func originPolicySeesNilWhenAbsent() {
        let configuration = ServerHandshakeConfiguration(originPolicy: { $0 == nil })
        #expect(upgrade(evaluate(head(), configuration)) != nil)
        expectRejection(evaluate(head([("Origin", "null")]), configuration), status: 403)
    }

    @Test func selectsSubprotocolByServerPreference() throws {
        let configuration = ServerHandshakeConfiguration(subprotocols: ["bangbang.v2", "bangbang.v1"])
        let both = try #require(upgrade(evaluate(head([("Sec-WebSocket-Protocol", "bangbang.v1, bangbang.v2")]), configuration)))
        #expect(both.subprotocol == "bangbang.v2")
        let split = try #require(upgrade(evaluate(head([("Sec-WebSocket-Protocol", "x")],
                                                       extra: [("Sec-WebSocket-Protocol", "bangbang.v1")]), configuration)))
        #expect(split.subprotocol == "bangbang.v1")
        let none = try #require(upgrade(evaluate(head([("Sec-WebSocket-Protocol", "other, BANGBANG.V1")]), configuration)))
        #expect(none.subprotocol == nil)
        #expect(none.response.headers["Sec-WebSocket-Protocol"] == nil)
    }

    @Test func rejectsNonTokenSubprotocols() {
        expectRejection(evaluate(head([("Sec-WebSocket-Protocol", "a b")])), status: 400)
        expectRejection(evaluate(head([("Sec-WebSocket-Protocol", "a, \"b\"")])), status: 400)
    }

    @Test func rejectsMalformedExtensionHeader() {
        expectRejection(evaluate(head([("Sec-WebSocket-Extensions", "permessage-deflate; =1")])), status: 400)
    }

    @Test func negotiatesDeflateIntoTheResponse() throws {
        let result = try #require(upgrade(evaluate(head([("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")]))))
        #expect(result.response.headers["Sec-WebSocket-Extensions"]
                == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        #expect(result.deflate == DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true))
    }
}
