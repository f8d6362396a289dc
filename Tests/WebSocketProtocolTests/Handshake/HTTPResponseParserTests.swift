import Testing
@testable import WebSocketProtocol

@Suite struct HTTPResponseParserTests {
    func response(_ text: String, limits: HTTPParserLimits = HTTPParserLimits(),
                  sourceLocation: SourceLocation = #_sourceLocation) -> FeedOutcome<HTTPResponseHead> {
        verifyHeadDripFeed(HTTPResponseParser.self, bytes(text), limits: limits, sourceLocation: sourceLocation)
    }

    @Test func parsesSwitchingProtocolsInEverySplit() throws {
        let head = try #require(response("""
            HTTP/1.1 101 Switching Protocols\r
            Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r
            \r

            """).head)
        #expect(head.status == 101)
        #expect(head.reasonPhrase == "Switching Protocols")
        #expect(head.version == .http1_1)
        #expect(head.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func acceptsEmptyOrMissingReasonPhrase() throws {
        #expect(response("HTTP/1.1 101 \r\n\r\n").head?.reasonPhrase == "")
        #expect(response("HTTP/1.1 101\r\n\r\n").head?.status == 101)
    }

    @Test func rejectsMalformedStatusLines() {
        for line in ["HTTP/1.1  101 x", "HTTP/1.1 1011 x", "HTTP/1.1 10 x", "HTTP/1.1 1a1 x", "http/1.1 101 x",
                     "HTTP/1.1", "HTTP/1.1 ", "", "HTTP/1.1 101 a\u{1}b", "HTTP/1.1x 101 ok"] {
            #expect(response(line + "\r\n\r\n").error?.kind == .malformed, "\(line)")
        }
    }

    @Test func rejectsVersionsOtherThanHTTP11() {
        #expect(response("HTTP/1.0 101 x\r\n\r\n").error?.kind == .unsupportedVersion)
        #expect(response("HTTP/2.0 101 x\r\n\r\n").error?.kind == .unsupportedVersion)
    }

    @Test func appliesTheSameHeaderRules() {
        #expect(response("HTTP/1.1 101 x\r\nA: b\r\n c\r\n\r\n").error?.kind == .malformed)
        #expect(response("HTTP/1.1 101 x\nA: b\r\n\r\n").error?.kind == .malformed)
        #expect(response("HTTP/1.1 101 x\r\nA : b\r\n\r\n").error?.kind == .malformed)
        #expect(response("HTTP/1.1 101 x\r\nA: \u{0}\r\n\r\n").error?.kind == .malformed)
    }

    @Test func enforcesLimitsAtTheBoundary() {
        let lineLimits = HTTPParserLimits(maximumStartLineLength: 16)
        #expect(response("HTTP/1.1 101 abc\r\n\r\n", limits: lineLimits).head != nil)
        #expect(response("HTTP/1.1 101 abcd\r\n\r\n", limits: lineLimits).error?.kind == .startLineTooLong)
        let countLimits = HTTPParserLimits(maximumHeaderCount: 2)
        #expect(response("HTTP/1.1 101 x\r\nA: 1\r\nB: 2\r\n\r\n", limits: countLimits).head != nil)
        #expect(response("HTTP/1.1 101 x\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: countLimits).error?.kind == .tooManyHeaders)
        let blockLimits = HTTPParserLimits(maximumHeaderBlockSize: 8)
        #expect(response("HTTP/1.1 101 x\r\nA: 1\r\n\r\n", limits: blockLimits).head != nil)
        #expect(response("HTTP/1.1 101 x\r\nA: 12\r\n\r\n", limits: blockLimits).error?.kind == .headerBlockTooLarge)
    }

    @Test func doesNotReadABody() throws {
        var parser = HTTPResponseParser()
        let input = bytes("HTTP/1.1 400 Bad Request\r\nContent-Length: 4\r\n\r\nnope")
        guard case .complete(let head, let consumed) = try parser.parse(input) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.status == 400)
        #expect(consumed == input.count - 4)
    }
}
