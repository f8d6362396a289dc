import Testing
@testable import WebSocketProtocol

@Suite struct HTTPRequestParserTests {
    static let browserRequest = """
        GET /chat?room=7&x HTTP/1.1\r
        Host: server.example.com\r
        Upgrade: websocket\r
        Connection: keep-alive, Upgrade\r
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
        Origin: http://example.com\r
        Sec-WebSocket-Protocol: chat, superchat\r
        Sec-WebSocket-Version: 13\r
        \r

        """

    func request(_ text: String, limits: HTTPParserLimits = HTTPParserLimits(),
                 sourceLocation: SourceLocation = #_sourceLocation) -> FeedOutcome<HTTPRequestHead> {
        verifyHeadDripFeed(HTTPRequestParser.self, bytes(text), limits: limits, sourceLocation: sourceLocation)
    }

    func expectRejected(_ text: String, _ kind: HTTPParseError.Kind, status: Int,
                        limits: HTTPParserLimits = HTTPParserLimits(),
                        sourceLocation: SourceLocation = #_sourceLocation) {
        let outcome = request(text, limits: limits, sourceLocation: sourceLocation)
        #expect(outcome.error?.kind == kind, "\(outcome)", sourceLocation: sourceLocation)
        #expect(outcome.error?.status == status, sourceLocation: sourceLocation)
    }

    @Test func parsesBrowserHandshakeInEverySplit() throws {
        let head = try #require(request(Self.browserRequest).head)
        #expect(head.method == "GET")
        #expect(head.target == "/chat?room=7&x")
        #expect(head.path == "/chat")
        #expect(head.query == "room=7&x")
        #expect(head.version == .http1_1)
        #expect(head.headers.count == 7)
        #expect(head.headers.fields.map(\.name) == ["Host", "Upgrade", "Connection", "Sec-WebSocket-Key",
                                                   "Origin", "Sec-WebSocket-Protocol", "Sec-WebSocket-Version"])
        #expect(head.headers["sec-websocket-key"] == "dGhlIHNhbXBsZSBub25jZQ==")
    }

    @Test func leavesPipelinedFrameBytesUnconsumed() throws {
        let frame: [UInt8] = [0x81, 0x82, 1, 2, 3, 4, 0x49, 0x6B]
        var parser = HTTPRequestParser()
        let input = bytes(Self.browserRequest) + frame
        guard case .complete(_, let consumed) = try parser.parse(input) else {
            Issue.record("head not complete")
            return
        }
        #expect(consumed == input.count - frame.count)
    }

    @Test func targetWithoutQueryHasNilQuery() throws {
        let head = try #require(request("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n").head)
        #expect(head.path == "/healthz")
        #expect(head.query == nil)
        let empty = try #require(request("GET /x? HTTP/1.1\r\n\r\n").head)
        #expect(empty.path == "/x")
        #expect(empty.query == "")
    }

    @Test func trimsValueWhitespaceButKeepsInnerWhitespace() throws {
        let head = try #require(request("GET / HTTP/1.1\r\nA: \t one  two \t\r\nB:\r\nC:   \r\n\r\n").head)
        #expect(head.headers["a"] == "one  two")
        #expect(head.headers["b"] == "")
        #expect(head.headers["c"] == "")
    }

    @Test func acceptsHTTP10ForTheCallerToRefuse() throws {
        let head = try #require(request("GET / HTTP/1.0\r\n\r\n").head)
        #expect(head.version == .http1_0)
    }

    @Test func acceptsObsTextInValues() throws {
        let head = try #require(verifyHeadDripFeed(HTTPRequestParser.self,
                                                        bytes("GET / HTTP/1.1\r\nX: caf") + [0xC3, 0xA9] + bytes("\r\n\r\n")).head)
        #expect(head.headers["x"] == "café")
    }

    @Test func rejectsOtherHTTPVersionsWith505() {
        expectRejected("GET / HTTP/2.0\r\n\r\n", .unsupportedVersion, status: 505)
        expectRejected("GET / HTTP/0.9\r\n\r\n", .unsupportedVersion, status: 505)
        expectRejected("GET / HTTP/1.2\r\n\r\n", .unsupportedVersion, status: 505)
    }

    @Test func rejectsMalformedRequestLines() {
        for line in ["GET  / HTTP/1.1", "GET / HTTP/1.1 ", " GET / HTTP/1.1", "GET /", "GET / http/1.1",
                     "GET / HTTP/1.10", "GET / HTTP/11", "G(T / HTTP/1.1", "GET /a\u{7F} HTTP/1.1",
                     "GET /\tx HTTP/1.1", "", "GET", "GET / HTTP/1.1 extra"] {
            expectRejected(line + "\r\n\r\n", .malformed, status: 400)
        }
    }

    @Test func rejectsNonASCIIInTarget() {
        let outcome = verifyHeadDripFeed(HTTPRequestParser.self, bytes("GET /caf") + [0xC3, 0xA9] + bytes(" HTTP/1.1\r\n\r\n"))
        #expect(outcome.error?.kind == .malformed)
    }

    @Test func rejectsObsFoldAndLeadingWhitespace() {
        expectRejected("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\n A: b\r\n\r\n", .malformed, status: 400)
    }

    @Test func rejectsBareLineFeedsAndBareCarriageReturns() {
        expectRejected("GET / HTTP/1.1\nHost: a\r\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\nHost: a\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\nHost: a\r\n\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\nHost:\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\rHost: a\r\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", .malformed, status: 400)
        expectRejected("GET / HTTP/1.1\r\n\rX", .malformed, status: 400)
    }

    @Test func rejectsLeadingEmptyLine() {
        expectRejected("\r\nGET / HTTP/1.1\r\n\r\n", .malformed, status: 400)
    }

    @Test func rejectsBadHeaderNames() {
        for line in ["Bad Name: x", "Bad\u{01}: x", ": x", "Host : x", "Host\t: x", "Na(me: x", "NoColon",
                     "Ho\u{00}st: x", "\"q\": x"] {
            expectRejected("GET / HTTP/1.1\r\n" + line + "\r\n\r\n", .malformed, status: 400)
        }
        let nonASCII = verifyHeadDripFeed(HTTPRequestParser.self, bytes("GET / HTTP/1.1\r\nN") + [0xC3, 0xA9] + bytes(": x\r\n\r\n"))
        #expect(nonASCII.error?.kind == .malformed)
    }

    @Test func rejectsControlCharactersInValues() {
        for control: UInt8 in [0x00, 0x01, 0x08, 0x0B, 0x0C, 0x1F, 0x7F] {
            let input = bytes("GET / HTTP/1.1\r\nX: a") + [control] + bytes("b\r\n\r\n")
            #expect(verifyHeadDripFeed(HTTPRequestParser.self, input).error?.kind == .malformed, "byte \(control)")
            let leading = bytes("GET / HTTP/1.1\r\nX: ") + [control] + bytes("\r\n\r\n")
            #expect(verifyHeadDripFeed(HTTPRequestParser.self, leading).error?.kind == .malformed, "byte \(control)")
        }
        let nulInLine = bytes("GET /\u{0} HTTP/1.1\r\n\r\n")
        #expect(verifyHeadDripFeed(HTTPRequestParser.self, nulInLine).error?.kind == .malformed)
    }

    @Test func allowsZeroContentLength() throws {
        let head = try #require(request("GET / HTTP/1.1\r\nContent-Length: 0\r\ncontent-length: 00\r\n\r\n").head)
        #expect(head.headers.values(named: "Content-Length") == ["0", "00"])
    }

    @Test func rejectsRequestBodies() {
        expectRejected("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", .bodyNotAllowed, status: 413)
        expectRejected("GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n", .bodyNotAllowed, status: 413)
        expectRejected("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", .bodyNotAllowed, status: 413)
        expectRejected("GET / HTTP/1.1\r\ntransfer-encoding: identity\r\n\r\n", .bodyNotAllowed, status: 413)
    }

    @Test func rejectsMalformedContentLength() {
        for value in ["", "-1", "1 1", "0x0", "+0", "0, 0", "abc"] {
            expectRejected("GET / HTTP/1.1\r\nContent-Length: \(value)\r\n\r\n", .malformed, status: 400)
        }
    }

    @Test func rejectsBodyAsSoonAsItsHeaderEnds() throws {
        var parser = HTTPRequestParser()
        #expect(throws: HTTPParseError.self) {
            _ = try parser.parse(bytes("GET / HTTP/1.1\r\nContent-Length: 9\r\n"))
        }
    }

    @Test func keepsFailingWithTheSameError() throws {
        var parser = HTTPRequestParser()
        var first: HTTPParseError?
        do { _ = try parser.parse(bytes("GET / HTTP/1.1\r\n\u{1}")) } catch { first = error }
        #expect(first?.kind == .malformed)
        do {
            _ = try parser.parse(bytes("Host: a\r\n\r\n"))
            Issue.record("parser accepted input after failing")
        } catch {
            #expect(error == first)
        }
    }

    // MARK: Limits, exactly at and one past each boundary

    @Test func requestLineLimitAllowsExactlyTheMaximum() throws {
        let limits = HTTPParserLimits(maximumStartLineLength: 64)
        let prefix = "GET /"
        let suffix = " HTTP/1.1"
        let atLimit = prefix + String(repeating: "a", count: 64 - prefix.count - suffix.count) + suffix
        #expect(atLimit.utf8.count == 64)
        #expect(request(atLimit + "\r\n\r\n", limits: limits).head != nil)
        let pastLimit = prefix + String(repeating: "a", count: 65 - prefix.count - suffix.count) + suffix
        expectRejected(pastLimit + "\r\n\r\n", .startLineTooLong, status: 414, limits: limits)
    }

    @Test func requestLineLimitFailsOnTheFirstByteOver() throws {
        var parser = HTTPRequestParser(limits: HTTPParserLimits(maximumStartLineLength: 16))
        #expect(try parser.parse(bytes("GET /" + String(repeating: "a", count: 11))) == .needsMoreData)
        #expect(throws: HTTPParseError(.startLineTooLong, "start line longer than 16 bytes")) {
            _ = try parser.parse(bytes("a"))
        }
    }

    @Test func defaultLimitsAreDocumentedValues() {
        let limits = HTTPParserLimits()
        #expect(limits.maximumStartLineLength == 8192)
        #expect(limits.maximumHeaderBlockSize == 16384)
        #expect(limits.maximumHeaderCount == 100)
    }

    @Test func defaultRequestLineLimitIsEightKiB() {
        let target = "/" + String(repeating: "p", count: 8192 - "GET  HTTP/1.1".utf8.count - 1)
        #expect(request("GET \(target) HTTP/1.1\r\n\r\n").head != nil)
        expectRejected("GET \(target)p HTTP/1.1\r\n\r\n", .startLineTooLong, status: 414)
    }

    /// A header block of exactly `size` bytes: one field padded to fit, then the empty line.
    func headerBlock(size: Int) -> String {
        let overhead = "X: \r\n\r\n".utf8.count
        return "X: " + String(repeating: "v", count: size - overhead) + "\r\n\r\n"
    }

    @Test func headerBlockLimitAllowsExactlyTheMaximum() {
        let limits = HTTPParserLimits(maximumHeaderBlockSize: 100)
        #expect(request("GET / HTTP/1.1\r\n" + headerBlock(size: 100), limits: limits).head != nil)
        expectRejected("GET / HTTP/1.1\r\n" + headerBlock(size: 101), .headerBlockTooLarge, status: 431, limits: limits)
    }

    @Test func headerBlockLimitCountsTheFinalEmptyLine() {
        let limits = HTTPParserLimits(maximumHeaderBlockSize: 2)
        #expect(request("GET / HTTP/1.1\r\n\r\n", limits: limits).head != nil)
        expectRejected("GET / HTTP/1.1\r\nA:\r\n\r\n", .headerBlockTooLarge, status: 431, limits: limits)
    }

    @Test func defaultHeaderBlockLimitIsSixteenKiB() {
        #expect(request("GET / HTTP/1.1\r\n" + headerBlock(size: 16384)).head != nil)
        expectRejected("GET / HTTP/1.1\r\n" + headerBlock(size: 16385), .headerBlockTooLarge, status: 431)
    }

    @Test func headerBlockLimitFailsBeforeTheLineEnds() throws {
        var parser = HTTPRequestParser(limits: HTTPParserLimits(maximumHeaderBlockSize: 10))
        #expect(try parser.parse(bytes("GET / HTTP/1.1\r\nX: 1234567")) == .needsMoreData)
        #expect(throws: HTTPParseError.self) { _ = try parser.parse(bytes("8")) }
    }

    func headers(count: Int) -> String {
        (0..<count).map { "H\($0): v\r\n" }.joined()
    }

    @Test func headerCountLimitAllowsExactlyTheMaximum() throws {
        let limits = HTTPParserLimits(maximumHeaderCount: 5)
        let head = try #require(request("GET / HTTP/1.1\r\n" + headers(count: 5) + "\r\n", limits: limits).head)
        #expect(head.headers.count == 5)
        expectRejected("GET / HTTP/1.1\r\n" + headers(count: 6) + "\r\n", .tooManyHeaders, status: 431, limits: limits)
    }

    @Test func defaultHeaderCountLimitIsOneHundred() {
        #expect(request("GET / HTTP/1.1\r\n" + headers(count: 100) + "\r\n").head?.headers.count == 100)
        expectRejected("GET / HTTP/1.1\r\n" + headers(count: 101) + "\r\n", .tooManyHeaders, status: 431)
    }

    @Test func headerCountLimitFailsOnTheFirstByteOfTheExtraLine() throws {
        var parser = HTTPRequestParser(limits: HTTPParserLimits(maximumHeaderCount: 1))
        #expect(try parser.parse(bytes("GET / HTTP/1.1\r\nA: 1\r\n")) == .needsMoreData)
        #expect(throws: HTTPParseError.self) { _ = try parser.parse(bytes("B")) }
    }

    @Test func errorsCarryStatusAndReasonForTheResponse() throws {
        let error = try #require(request("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n").error)
        let response = error.response
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self) == "obsolete line folding is not accepted\n")
    }
}

@Suite struct HTTPRequestParserMutationTests {
    /// Every single-byte corruption of a small valid request must give one outcome however the
    /// input is split, and every completed head must still be well-formed.
    @Test func everyCorruptionParsesTheSameInEverySplit() {
        let original = bytes("GET /a?b HTTP/1.1\r\nHost: h\r\nX-Y: 1 2\r\n\r\n")
        let replacements: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x3A, 0x7F, 0xFF, UInt8(ascii: "a")]
        var completed = 0
        for index in original.indices {
            for replacement in replacements where replacement != original[index] {
                var input = original
                input[index] = replacement
                if let head = verifyHeadDripFeed(HTTPRequestParser.self, input).head {
                    completed += 1
                    #expect(head.headers.allSatisfy { HTTPSyntax.isToken($0.name) })
                    #expect(HTTPSyntax.isToken(head.method))
                }
            }
        }
        #expect(completed > 0)
    }
}
