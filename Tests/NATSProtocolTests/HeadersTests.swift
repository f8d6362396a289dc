import Testing
@testable import NATSProtocol

@Suite struct HeadersTests {
    private func parse(_ text: String) throws(NATSProtocolError) -> NATSHeaders {
        let bytes = [UInt8](text)
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(NATSProtocolError) in try NATSHeaders.parse(buffer) }
        }
        return try result.get()
    }

    @Test func parsesStatusDescriptionAndFieldsInOrder() throws {
        let headers = try parse("NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 3\r\nA:b\r\nA: c\r\n\r\n")
        #expect(headers.status == 408)
        #expect(headers.statusDescription == "Request Timeout")
        #expect(headers["nats-pending-messages"] == "3")
        #expect(headers["A"] == "b")
        #expect(headers.fields.map(\.value) == ["3", "b", "c"])
    }

    @Test func aBlockWithoutStatusHasNone() throws {
        let headers = try parse("NATS/1.0\r\nKV-Operation: DEL\r\n\r\n")
        #expect(headers.status == nil)
        #expect(headers["KV-Operation"] == "DEL")
    }

    @Test func refusesMalformedBlocks() {
        for text in ["NATS/1.0\r\n", "HTTP/1.1\r\n\r\n", "NATS/1.0 5x3\r\n\r\n", "NATS/1.0 +03\r\n\r\n", "NATS/1.0 -10\r\n\r\n", "NATS/1.0\r\nno colon\r\n\r\n",
                     "NATS/1.0\r\n: empty name\r\n\r\n", "NATS/1.0\r\nA: b\r\n\r\nextra", "NATS/1.0\r\nA b: c\r\n\r\n"] {
            #expect(throws: NATSProtocolError.malformedHeaders, "\(text.debugDescription)") { try parse(text) }
        }
    }

    @Test func encodingRoundTripsThroughTheParser() throws {
        var headers = NATSHeaders()
        headers.append("Nats-Expected-Last-Subject-Sequence", "17")
        headers.append("Nats-Msg-Id", "order-9")
        let block = try headers.encoded()
        #expect(String(decoding: block, as: UTF8.self)
                == "NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: 17\r\nNats-Msg-Id: order-9\r\n\r\n")
        #expect(try parse(String(decoding: block, as: UTF8.self)) == headers)
    }

    @Test func statusCodesKeepThreeDigits() throws {
        let headers = try parse("NATS/1.0 003\r\n\r\n")
        #expect(headers.status == 3)
        #expect(String(decoding: try headers.encoded(), as: UTF8.self) == "NATS/1.0 003\r\n\r\n")
        #expect(throws: CommandError.invalidHeader("status 1000")) { try NATSHeaders(status: 1000).encoded() }
    }

    @Test func encodingRefusesWhatABlockCannotCarry() {
        for (name, value) in [("A:B", "x"), ("", "x"), ("A B", "x"), ("A", "x\r\nB: y")] {
            var headers = NATSHeaders()
            headers.append(name, value)
            #expect(throws: CommandError.invalidHeader(name)) { try headers.encoded() }
        }
    }

    @Test func setReplacesEveryFieldOfThatName() {
        var headers = NATSHeaders(fields: [("A", "1"), ("a", "2"), ("B", "3")])
        headers.set("A", "4")
        #expect(headers.fields.map(\.name) == ["B", "A"])
        #expect(headers["a"] == "4")
    }
}
