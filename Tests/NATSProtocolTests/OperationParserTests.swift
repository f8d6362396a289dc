import Testing
@testable import NATSProtocol

@Suite struct OperationParserTests {
    let ping = [UInt8]("PING\r\n")

    @Test func parsesEveryServerOperation() {
        let input = [UInt8]("INFO {\"server_id\":\"x\",\"max_payload\":1048576}\r\nPING\r\nPONG\r\n+OK\r\n-ERR 'Unknown Subject'\r\n")
        let outcome = verifyDripFeed(input, followedBy: ping)
        #expect(outcome == [.info("{\"server_id\":\"x\",\"max_payload\":1048576}"), .ping, .pong, .ok, .error("Unknown Subject")])
    }

    @Test func operationNamesIgnoreCaseAndArgumentsAllowRunsOfBlanks() {
        let outcome = verifyDripFeed([UInt8]("ping\r\nmsg  a.b \t 7\t5\r\nhello\r\n"), followedBy: ping)
        #expect(outcome == [.ping, .message(subject: "a.b", sid: 7, replyTo: nil, headers: nil, payload: Array("hello".utf8))])
    }

    @Test func parsesMessagesWithAndWithoutReplySubjects() {
        let input = [UInt8]("MSG orders.north 1 5\r\nhello\r\nMSG orders.south 22 _INBOX.abc.1 0\r\n\r\n")
        let outcome = verifyDripFeed(input, followedBy: ping)
        #expect(outcome == [
            .message(subject: "orders.north", sid: 1, replyTo: nil, headers: nil, payload: Array("hello".utf8)),
            .message(subject: "orders.south", sid: 22, replyTo: "_INBOX.abc.1", headers: nil, payload: []),
        ])
    }

    @Test func payloadsMayContainLineBreaksAndOperationNames() {
        let payload = "PING\r\nMSG x 1 2\r\n"
        let input = [UInt8]("MSG s 3 \(payload.utf8.count)\r\n\(payload)\r\n")
        #expect(verifyDripFeed(input, followedBy: ping) == [
            .message(subject: "s", sid: 3, replyTo: nil, headers: nil, payload: Array(payload.utf8)),
        ])
    }

    @Test func parsesHeaderMessagesAndKeepsTheBlockWhole() {
        let block = "NATS/1.0\r\nNats-Msg-Id: 42\r\n\r\n"
        let input = [UInt8]("HMSG s 9 r.1 \(block.utf8.count) \(block.utf8.count + 3)\r\n\(block)abc\r\n")
        let outcome = verifyDripFeed(input, followedBy: ping)
        #expect(outcome == [.message(subject: "s", sid: 9, replyTo: "r.1", headers: Array(block.utf8), payload: Array("abc".utf8))])
    }

    @Test func parsesStatusOnlyHeaderMessages() {
        let block = "NATS/1.0 503\r\n\r\n"
        let input = [UInt8]("HMSG _INBOX.x.1 2 \(block.utf8.count) \(block.utf8.count)\r\n\(block)\r\n")
        #expect(verifyDripFeed(input, followedBy: ping) == [
            .message(subject: "_INBOX.x.1", sid: 2, replyTo: nil, headers: Array(block.utf8), payload: []),
        ])
    }

    @Test func largeBodiesSplitAcrossManyInputsArriveWhole() {
        let payload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let input = [UInt8]("MSG big 1 \(payload.count)\r\n") + payload + [UInt8]("\r\n") + ping
        let expected: [Parsed] = [.message(subject: "big", sid: 1, replyTo: nil, headers: nil, payload: payload), .ping]
        for chunkSize in [1_000, 4_096, 65_536, 150_000] {
            let chunks = stride(from: 0, to: input.count, by: chunkSize).map { input[$0..<min($0 + chunkSize, input.count)] }
            #expect(parse(chunks) == expected, "chunks of \(chunkSize)")
        }
        #expect(parse([input[...]]) == expected)
    }

    @Test func trailingGarbageFailsAfterTheOperationsBeforeIt() {
        let outcome = verifyDripFeed([UInt8]("PING\r\nMSG a 1 1\r\nx\r\nHELLO world\r\nPONG\r\n"))
        #expect(outcome == [.ping, .message(subject: "a", sid: 1, replyTo: nil, headers: nil, payload: [UInt8(ascii: "x")]),
                            .failure(.unknownOperation("HELLO"))])
    }

    @Test func controlLineLimitAppliesBeforeTheLineEnds() {
        let limits = ParserLimits(maxControlLineBytes: 64)
        let long = [UInt8]("INFO {\"" + String(repeating: "a", count: 100))
        #expect(parse([long[...]], limits: limits) == [.failure(.controlLineTooLong(limit: 64))])
        #expect(verifyDripFeed(long + [UInt8]("\"}\r\n"), limits: limits) == [.failure(.controlLineTooLong(limit: 64))])
        let fits = [UInt8]("INFO {\"" + String(repeating: "a", count: 53) + "\"}\r\n")
        #expect(fits.count == 64)
        #expect(verifyDripFeed(fits, limits: limits).count == 1)
    }

    @Test func oversizedMessagesAreRefusedFromTheirLineAlone() {
        let limits = ParserLimits(maxPayloadBytes: 1024)
        let outcome = verifyDripFeed([UInt8]("MSG a 1 1025\r\n"), limits: limits)
        #expect(outcome == [.failure(.payloadTooLarge(announced: 1025, limit: 1024))])
        let block = "NATS/1.0\r\n\r\n"
        #expect(parse([[UInt8]("HMSG a 1 \(block.utf8.count) 2000\r\n")[...]], limits: limits)
                == [.failure(.payloadTooLarge(announced: 2000, limit: 1024))])
    }

    @Test func refusesMalformedLines() {
        let cases: [(String, NATSProtocolError)] = [
            ("PING\n", .missingLineTerminator),
            ("PING extra\r\n", .malformedArguments(operation: "PING")),
            ("MSG a 1\r\n", .malformedArguments(operation: "MSG")),
            ("MSG a b 1 2 3\r\n", .malformedArguments(operation: "MSG")),
            ("MSG a x 1\r\nz\r\n", .malformedArguments(operation: "MSG")),
            ("MSG a 1 -1\r\n", .malformedArguments(operation: "MSG")),
            ("MSG a 1 99999999999999999999\r\n", .malformedArguments(operation: "MSG")),
            ("HMSG a 1 5\r\n", .malformedArguments(operation: "HMSG")),
            ("HMSG a 1 6 5\r\n", .malformedHeaders),
            ("HMSG a 1 12 12\r\nNOPE/1.0\r\n\r\n\r\n", .malformedHeaders),
            ("HMSG a 1 10 10\r\nNATS/1.0\r\n\r\n", .malformedHeaders),
            ("MSG a 1 3\r\nabcd\r\n", .missingLineTerminator),
            ("INFO nope\r\n", .malformedArguments(operation: "INFO")),
            ("\r\n", .unknownOperation("")),
        ]
        for (text, error) in cases {
            #expect(verifyDripFeed([UInt8](text)) == [.failure(error)], "\(text.debugDescription)")
        }
    }

    @Test func nothingIsEmittedForAnIncompleteOperation() {
        #expect(parse([[UInt8]("MSG a 1 5\r\nhel")[...]]) == [.error("incomplete")])
        #expect(parse([[UInt8]("PIN")[...]]) == [.error("incomplete")])
    }
}
