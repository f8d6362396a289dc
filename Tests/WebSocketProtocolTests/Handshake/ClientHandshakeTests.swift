import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct ClientHandshakeTests {
    func client(subprotocols: [String] = [], deflate: DeflateOffer? = nil, extraHeaders: HTTPHeaders = [:],
                seed: UInt64 = 7) -> ClientHandshake {
        var generator = SeededGenerator(seed: seed)
        return ClientHandshake(host: "localhost:8080", path: "/ws?token=abc", subprotocols: subprotocols,
                               deflate: deflate, extraHeaders: extraHeaders, using: &generator)
    }

    /// The server's answer to `client`'s request, parsed by the real request parser.
    func serve(_ client: ClientHandshake, _ configuration: ServerHandshakeConfiguration = ServerHandshakeConfiguration(),
               sourceLocation: SourceLocation = #_sourceLocation) throws -> WebSocketUpgrade {
        let head = try #require(verifyHeadDripFeed(HTTPRequestParser.self, client.requestBytes,
                                                        sourceLocation: sourceLocation).head,
                                sourceLocation: sourceLocation)
        guard case .upgrade(let upgrade) = ServerHandshake.evaluate(head, configuration: configuration) else {
            Issue.record("server refused", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return upgrade
    }

    /// Feeds `response` to the client whole and checks that a byte-by-byte feed agrees.
    func receive(_ client: ClientHandshake, _ response: [UInt8]) -> Result<ClientHandshakeResult, ClientHandshakeError> {
        var whole = client
        let wholeResult: Result<ClientHandshakeResult, ClientHandshakeError>
        do {
            switch try whole.receive(response) {
            case .needsMoreData: return .failure(.unexpectedStatus(-1))
            case .established(let result): wholeResult = .success(result)
            }
        } catch {
            wholeResult = .failure(error)
        }
        var dripped = client
        var drippedResult: Result<ClientHandshakeResult, ClientHandshakeError>?
        for (index, byte) in response.enumerated() {
            do {
                if case .established(var result) = try dripped.receive([byte]) {
                    result.unconsumedBytes += response[(index + 1)...]
                    drippedResult = .success(result)
                    break
                }
            } catch {
                drippedResult = .failure(error)
                break
            }
        }
        #expect(drippedResult == wholeResult)
        return wholeResult
    }

    func response(_ text: String) -> [UInt8] { bytes(text) }

    @Test func keyComesFromTheGeneratorAndIsValid() {
        let first = client(seed: 1)
        #expect(WebSocketHandshake.isValidKey(first.key))
        #expect(client(seed: 1).key == first.key)
        #expect(client(seed: 2).key != first.key)
    }

    @Test func requestCarriesEveryHandshakeField() throws {
        let handshake = client(subprotocols: ["a", "b"], deflate: DeflateOffer(requestsClientNoContextTakeover: true),
                               extraHeaders: ["Origin": "https://bangbang.example"])
        let head = try #require(verifyHeadDripFeed(HTTPRequestParser.self, handshake.requestBytes).head)
        #expect(head.method == "GET")
        #expect(head.target == "/ws?token=abc")
        #expect(head.headers["Host"] == "localhost:8080")
        #expect(head.headers["Sec-WebSocket-Key"] == handshake.key)
        #expect(head.headers["Sec-WebSocket-Version"] == "13")
        #expect(head.headers["Sec-WebSocket-Protocol"] == "a, b")
        #expect(head.headers["Sec-WebSocket-Extensions"] == "permessage-deflate; client_no_context_takeover")
        #expect(head.headers["Origin"] == "https://bangbang.example")
    }

    @Test func roundTripsWithoutExtensions() throws {
        let handshake = client()
        let upgrade = try serve(handshake)
        let frame: [UInt8] = [0x81, 0x02, 0x68, 0x69]
        let result = try receive(handshake, upgrade.responseBytes + frame).get()
        #expect(result.subprotocol == nil)
        #expect(result.deflate == nil)
        #expect(result.unconsumedBytes == frame)
    }

    @Test func roundTripsSubprotocolAndDeflate() throws {
        let handshake = client(subprotocols: ["bangbang.v1", "bangbang.v2"],
                               deflate: DeflateOffer(serverMaxWindowBits: 12, offersClientMaxWindowBits: true))
        let upgrade = try serve(handshake, ServerHandshakeConfiguration(subprotocols: ["bangbang.v2"]))
        let result = try receive(handshake, upgrade.responseBytes).get()
        #expect(result.subprotocol == "bangbang.v2")
        #expect(result.deflate == upgrade.deflate)
        #expect(result.deflate == DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true,
                                                    serverMaxWindowBits: 12, clientMaxWindowBits: 15))
    }

    @Test func roundTripsEveryOfferShape() throws {
        let configurations = [DeflateConfiguration(),
                              DeflateConfiguration(serverMaxWindowBits: 9, requestsServerNoContextTakeover: false,
                                                   requestsClientNoContextTakeover: false)]
        for configuration in configurations {
            for serverNoContext in [false, true] {
                for clientNoContext in [false, true] {
                    for window in [nil, 9, 15] {
                        let offer = DeflateOffer(requestsServerNoContextTakeover: serverNoContext,
                                                 requestsClientNoContextTakeover: clientNoContext,
                                                 serverMaxWindowBits: window)
                        let handshake = client(deflate: offer)
                        let upgrade = try serve(handshake, ServerHandshakeConfiguration(deflate: configuration))
                        let result = try receive(handshake, upgrade.responseBytes).get()
                        #expect(result.deflate == upgrade.deflate, "\(offer) \(configuration)")
                        #expect(result.deflate != nil)
                    }
                }
            }
        }
    }

    func accepted(_ handshake: ClientHandshake, extra: String = "") -> [UInt8] {
        response("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: handshake.key))\r\n\(extra)\r\n")
    }

    @Test func acceptsCaseInsensitiveTokens() throws {
        let handshake = client()
        let text = "HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nconnection: keep-alive, UPGRADE\r\n"
            + "sec-websocket-accept: \(WebSocketHandshake.acceptValue(forKey: handshake.key))\r\n\r\n"
        #expect(try receive(handshake, response(text)).get().deflate == nil)
    }

    @Test func rejectsNonSwitchingStatus() {
        let handshake = client()
        let refusal = HTTPResponse.rejection(status: 403, reason: "origin not allowed").serialized()
        #expect(receive(handshake, refusal) == .failure(.unexpectedStatus(403)))
    }

    @Test func rejectsMalformedResponseHead() {
        let result = receive(client(), response("HTTP/1.1 101 x\r\nA: b\r\n c\r\n\r\n"))
        guard case .failure(.malformedResponse(let error)) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(error.kind == .malformed)
    }

    @Test func rejectsWrongOrMissingAcceptValue() {
        let handshake = client()
        let wrong = response("HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                             + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
        #expect(receive(handshake, wrong) == .failure(.wrongAcceptValue))
        let missing = response("HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        #expect(receive(handshake, missing) == .failure(.wrongAcceptValue))
        let otherClient = client(seed: 99)
        #expect(receive(handshake, accepted(otherClient)) == .failure(.wrongAcceptValue))
    }

    @Test func rejectsMissingUpgradeOrConnection() {
        let handshake = client()
        let accept = WebSocketHandshake.acceptValue(forKey: handshake.key)
        #expect(receive(handshake, response("HTTP/1.1 101 x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"))
                == .failure(.missingUpgradeWebSocket))
        #expect(receive(handshake, response("HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: close\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"))
                == .failure(.missingConnectionUpgrade))
    }

    @Test func rejectsUnofferedSubprotocol() {
        let handshake = client(subprotocols: ["a"])
        #expect(receive(handshake, accepted(handshake, extra: "Sec-WebSocket-Protocol: b\r\n")) == .failure(.unofferedSubprotocol("b")))
        #expect(receive(handshake, accepted(handshake, extra: "Sec-WebSocket-Protocol: a, a\r\n")) == .failure(.unofferedSubprotocol("a, a")))
        let none = client()
        #expect(receive(none, accepted(none, extra: "Sec-WebSocket-Protocol: a\r\n")) == .failure(.unofferedSubprotocol("a")))
        #expect((try? receive(handshake, accepted(handshake, extra: "Sec-WebSocket-Protocol: a\r\n")).get().subprotocol) == "a")
    }

    @Test func rejectsUnofferedExtension() {
        let plain = client()
        #expect(receive(plain, accepted(plain, extra: "Sec-WebSocket-Extensions: permessage-deflate\r\n"))
                == .failure(.unofferedExtension("permessage-deflate")))
        let deflating = client(deflate: DeflateOffer())
        #expect(receive(deflating, accepted(deflating, extra: "Sec-WebSocket-Extensions: x-other\r\n"))
                == .failure(.unofferedExtension("x-other")))
        #expect(receive(deflating, accepted(deflating, extra: "Sec-WebSocket-Extensions: permessage-deflate, permessage-deflate\r\n"))
                == .failure(.unofferedExtension("permessage-deflate, permessage-deflate")))
    }

    @Test func rejectsMalformedOrInconsistentDeflateAnswers() {
        let offer = DeflateOffer(requestsServerNoContextTakeover: true, serverMaxWindowBits: 10)
        let handshake = client(deflate: offer)
        func answer(_ value: String) -> Result<ClientHandshakeResult, ClientHandshakeError> {
            receive(handshake, accepted(handshake, extra: "Sec-WebSocket-Extensions: \(value)\r\n"))
        }
        #expect(answer("permessage-deflate; server_no_context_takeover; server_max_window_bits=10; foo") == .failure(.malformedExtensionResponse))
        #expect(answer("permessage-deflate; server_no_context_takeover; server_max_window_bits=10; server_max_window_bits=9") == .failure(.malformedExtensionResponse))
        #expect(answer("permessage-deflate; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits") == .failure(.malformedExtensionResponse))
        #expect(answer("permessage-deflate; server_no_context_takeover; =") == .failure(.malformedExtensionResponse))
        guard case .failure(.extensionResponseMismatch) = answer("permessage-deflate; server_max_window_bits=10") else {
            Issue.record("missing server_no_context_takeover accepted")
            return
        }
        guard case .failure(.extensionResponseMismatch) = answer("permessage-deflate; server_no_context_takeover; server_max_window_bits=11") else {
            Issue.record("window above the offer accepted")
            return
        }
        guard case .failure(.extensionResponseMismatch) = answer("permessage-deflate; server_no_context_takeover") else {
            Issue.record("unanswered server_max_window_bits accepted")
            return
        }
        guard case .failure(.extensionResponseMismatch) = answer("permessage-deflate; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits=10") else {
            Issue.record("unoffered client_max_window_bits accepted")
            return
        }
        #expect((try? answer("permessage-deflate; server_no_context_takeover; server_max_window_bits=8").get().deflate?.serverMaxWindowBits) == 8)
    }

    @Test func rejectsClientWindowOfEight() throws {
        let handshake = client(deflate: DeflateOffer(offersClientMaxWindowBits: true))
        guard case .failure(.extensionResponseMismatch) = receive(handshake, accepted(handshake, extra: "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=8\r\n")) else {
            Issue.record("client_max_window_bits=8 accepted")
            return
        }
        let nine = try receive(handshake, accepted(handshake, extra: "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=9\r\n")).get()
        #expect(nine.deflate?.clientMaxWindowBits == 9)
    }

    @Test func waitsForTheWholeHead() throws {
        var handshake = client()
        let bytes = accepted(handshake)
        #expect(try handshake.receive(bytes.dropLast()) == .needsMoreData)
        guard case .established(let result) = try handshake.receive(bytes.suffix(1) + [0x88]) else {
            Issue.record("not established")
            return
        }
        #expect(result.unconsumedBytes == [0x88])
    }
}
