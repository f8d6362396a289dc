import Testing
@testable import WebSocketProtocol

@Suite struct ExtensionListParsingTests {
    @Test func parsesSeveralOffersWithParameters() throws {
        let list = try #require(WebSocketExtension.parseList(
            "permessage-deflate; client_max_window_bits; server_max_window_bits=10 , permessage-deflate,x-foo;a=\"b\""))
        #expect(list.count == 3)
        #expect(list[0] == WebSocketExtension(name: "permessage-deflate",
                                              parameters: [.init(name: "client_max_window_bits"),
                                                           .init(name: "server_max_window_bits", value: "10")]))
        #expect(list[1] == WebSocketExtension(name: "permessage-deflate"))
        #expect(list[2] == WebSocketExtension(name: "x-foo", parameters: [.init(name: "a", value: "b")]))
    }

    @Test func unquotesAndUnescapesQuotedValues() throws {
        let list = try #require(WebSocketExtension.parseList("e; a=\"1\\0\"; b = \"x\""))
        #expect(list[0].parameters == [.init(name: "a", value: "10"), .init(name: "b", value: "x")])
    }

    @Test func ignoresEmptyListElements() throws {
        #expect(try #require(WebSocketExtension.parseList(" , a ,, b, ")).map(\.name) == ["a", "b"])
        #expect(WebSocketExtension.parseList("") == [])
    }

    @Test func combinesSeveralFields() throws {
        let headers: HTTPHeaders = ["Sec-WebSocket-Extensions": "a", "sec-websocket-extensions": "b; x=1"]
        #expect(try #require(WebSocketExtension.parseList(in: headers)).map(\.name) == ["a", "b"])
    }

    @Test func rejectsBrokenSyntax() {
        for text in ["a;", "a; =1", "a; b=", "a; b=\"\"", "a; b=\"x y\"", "a; b=\"unterminated", "a b", ";a",
                     "a; b=c d", "a; b=\"x\\", "a; b==c", "a; b=\"x\"y", "\"a\""] {
            #expect(WebSocketExtension.parseList(text) == nil, "\(text)")
        }
    }
}

@Suite struct DeflateNegotiationTests {
    func negotiate(_ header: String, _ configuration: DeflateConfiguration = DeflateConfiguration(),
                   sourceLocation: SourceLocation = #_sourceLocation) -> (String, DeflateParameters)? {
        guard let offers = WebSocketExtension.parseList(header) else {
            Issue.record("unparsable offer", sourceLocation: sourceLocation)
            return nil
        }
        guard let result = PermessageDeflate.negotiate(offers: offers, configuration: configuration) else { return nil }
        return (result.response.headerValue, result.parameters)
    }

    let stateless = DeflateConfiguration(requestsServerNoContextTakeover: false, requestsClientNoContextTakeover: false)

    @Test func defaultsAreDocumentedValues() {
        let configuration = DeflateConfiguration()
        #expect(configuration.isEnabled)
        #expect(configuration.serverMaxWindowBits == 15)
        #expect(configuration.requestsServerNoContextTakeover)
        #expect(configuration.requestsClientNoContextTakeover)
    }

    @Test func defaultConfigurationAddsNoContextTakeoverBothWays() throws {
        let (response, parameters) = try #require(negotiate("permessage-deflate"))
        #expect(response == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        #expect(parameters == DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true,
                                                serverMaxWindowBits: 15, clientMaxWindowBits: 15))
    }

    @Test func plainOfferIsAcceptedPlainlyWhenNotRequestingNoContextTakeover() throws {
        let (response, parameters) = try #require(negotiate("permessage-deflate", stateless))
        #expect(response == "permessage-deflate")
        #expect(parameters == DeflateParameters())
    }

    @Test func honoursRequestedNoContextTakeover() throws {
        let (response, parameters) = try #require(negotiate("permessage-deflate; server_no_context_takeover; client_no_context_takeover", stateless))
        #expect(response == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        #expect(parameters.serverNoContextTakeover && parameters.clientNoContextTakeover)
    }

    @Test func disabledConfigurationDeclinesEverything() {
        #expect(negotiate("permessage-deflate", .disabled) == nil)
    }

    @Test func ignoresOtherExtensionsAndPicksFirstAcceptableOffer() throws {
        let (response, parameters) = try #require(negotiate(
            "x-webkit-deflate-frame, permessage-deflate; foo=1, permessage-deflate; server_max_window_bits=12, permessage-deflate", stateless))
        #expect(response == "permessage-deflate; server_max_window_bits=12")
        #expect(parameters.serverMaxWindowBits == 12)
    }

    @Test func declinesOffersWithUnknownDuplicateOrInvalidParameters() {
        for offer in ["permessage-deflate; foo",
                      "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
                      "permessage-deflate; client_max_window_bits; client_max_window_bits=10",
                      "permessage-deflate; server_no_context_takeover=1",
                      "permessage-deflate; client_no_context_takeover=\"x\"",
                      "permessage-deflate; server_max_window_bits",
                      "permessage-deflate; server_max_window_bits=7",
                      "permessage-deflate; server_max_window_bits=16",
                      "permessage-deflate; server_max_window_bits=010",
                      "permessage-deflate; client_max_window_bits=0",
                      "permessage-deflate; client_max_window_bits=16",
                      "permessage-deflate; client_max_window_bits=-9"] {
            #expect(negotiate(offer) == nil, "\(offer)")
        }
    }

    @Test func acceptsQuotedWindowBits() throws {
        let (response, parameters) = try #require(negotiate("permessage-deflate; server_max_window_bits=\"10\"", stateless))
        #expect(response == "permessage-deflate; server_max_window_bits=10")
        #expect(parameters.serverMaxWindowBits == 10)
    }

    @Test func clientMaxWindowBitsWithoutValueMeansSupported() throws {
        let (response, parameters) = try #require(negotiate("permessage-deflate; client_max_window_bits", stateless))
        #expect(response == "permessage-deflate")
        #expect(parameters.clientMaxWindowBits == 15)
        let hinted = try #require(negotiate("permessage-deflate; client_max_window_bits=8", stateless))
        #expect(hinted.0 == "permessage-deflate")
    }

    @Test func declinesServerWindowOfEightButAcceptsNine() throws {
        #expect(negotiate("permessage-deflate; server_max_window_bits=8") == nil)
        let (response, parameters) = try #require(negotiate("permessage-deflate; server_max_window_bits=8, permessage-deflate; server_max_window_bits=9", stateless))
        #expect(response == "permessage-deflate; server_max_window_bits=9")
        #expect(parameters.serverMaxWindowBits == 9)
    }

    @Test func neverAnswersAboveTheOfferedOrConfiguredWindow() throws {
        let small = DeflateConfiguration(serverMaxWindowBits: 11, requestsServerNoContextTakeover: false,
                                         requestsClientNoContextTakeover: false)
        #expect(try #require(negotiate("permessage-deflate; server_max_window_bits=13", small)).0
                == "permessage-deflate; server_max_window_bits=11")
        #expect(try #require(negotiate("permessage-deflate; server_max_window_bits=10", small)).0
                == "permessage-deflate; server_max_window_bits=10")
        let unasked = try #require(negotiate("permessage-deflate", small))
        #expect(unasked.0 == "permessage-deflate; server_max_window_bits=11")
        #expect(unasked.1.serverMaxWindowBits == 11)
    }

    @Test func extensionNamesCompareCaseInsensitively() {
        #expect(negotiate("PerMessage-Deflate") != nil)
    }
}
