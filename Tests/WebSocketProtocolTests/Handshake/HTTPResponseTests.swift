import Testing
@testable import WebSocketProtocol

@Suite struct HTTPResponseTests {
    func text(_ response: HTTPResponse, includingBody: Bool = true) -> String {
        String(decoding: response.serialized(includingBody: includingBody), as: UTF8.self)
    }

    @Test func rejectionClosesAndCountsItsBody() {
        let response = HTTPResponse.rejection(status: 400, reason: "missing Host")
        #expect(text(response) == """
            HTTP/1.1 400 Bad Request\r
            Content-Type: text/plain; charset=utf-8\r
            Connection: close\r
            Content-Length: 13\r
            \r
            missing Host

            """)
    }

    @Test func upgradeRequiredAnnouncesVersion13() {
        let response = HTTPResponse.rejection(status: 426, reason: "x")
        #expect(response.headers["Sec-WebSocket-Version"] == "13")
        #expect(response.headers["Connection"] == "close")
        #expect(text(response).hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"))
    }

    @Test func methodNotAllowedListsAllowedMethods() {
        #expect(HTTPResponse.rejection(status: 405, reason: "x").headers["Allow"] == "GET, HEAD")
    }

    @Test func switchingProtocolsHasNoContentLength() {
        let response = HTTPResponse(status: 101, headers: ["Upgrade": "websocket", "Connection": "Upgrade"])
        #expect(text(response) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    }

    @Test func emptyBodyStillGetsContentLengthZero() {
        #expect(text(HTTPResponse.plain(status: 404, body: [])).contains("\r\nContent-Length: 0\r\n\r\n"))
        #expect(!text(HTTPResponse(status: 204)).contains("Content-Length"))
    }

    @Test func headResponseKeepsLengthButOmitsBody() {
        let response = HTTPResponse.plain(body: Array("ok".utf8))
        #expect(text(response, includingBody: false).hasSuffix("Content-Length: 2\r\n\r\n"))
        #expect(text(response).hasSuffix("Content-Length: 2\r\n\r\nok"))
    }

    @Test func serializedResponseParsesBack() throws {
        let response = HTTPResponse.rejection(status: 403, reason: "origin not allowed")
        let serialized = response.serialized()
        var parser = HTTPResponseParser()
        guard case .complete(let head, let consumed) = try parser.parse(serialized) else {
            Issue.record("incomplete")
            return
        }
        #expect(head.status == 403)
        #expect(head.reasonPhrase == "Forbidden")
        #expect(head.headers["content-length"] == String(response.body.count))
        #expect(Array(serialized.dropFirst(consumed)) == response.body)
    }
}
