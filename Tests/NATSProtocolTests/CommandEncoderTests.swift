import Testing
@testable import NATSProtocol

@Suite struct CommandEncoderTests {
    private func text(_ build: (inout [UInt8]) throws(CommandError) -> Void) throws(CommandError) -> String {
        var bytes: [UInt8] = []
        try build(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func writesPublishWithAndWithoutReply() throws {
        let payload = [UInt8]("hello")
        #expect(try text { (b) throws(CommandError) in try CommandEncoder.publish(subject: "a.b", payload: payload, into: &b) }
                == "PUB a.b 5\r\nhello\r\n")
        #expect(try text { (b) throws(CommandError) in
            try CommandEncoder.publish(subject: "a", replyTo: "_INBOX.x.1", payload: [UInt8](), into: &b)
        } == "PUB a _INBOX.x.1 0\r\n\r\n")
    }

    @Test func writesHeaderPublishWithBothSizes() throws {
        let headers = NATSHeaders(fields: [("Nats-Msg-Id", "1")])
        let encoded = try text { (b) throws(CommandError) in
            try CommandEncoder.publish(subject: "s", replyTo: "r", headers: headers, payload: [UInt8]("xy"), into: &b)
        }
        #expect(encoded == "HPUB s r 28 30\r\nNATS/1.0\r\nNats-Msg-Id: 1\r\n\r\nxy\r\n")
    }

    @Test func writesSubscriptionCommands() throws {
        #expect(try text { (b) throws(CommandError) in try CommandEncoder.subscribe(subject: "a.*.>", subscriptionID: 12, into: &b) }
                == "SUB a.*.> 12\r\n")
        #expect(try text { (b) throws(CommandError) in try CommandEncoder.subscribe(subject: "a", queueGroup: "q", subscriptionID: 1234567890, into: &b) }
                == "SUB a q 1234567890\r\n")
        #expect(try text { b in CommandEncoder.unsubscribe(subscriptionID: 3, into: &b) } == "UNSUB 3\r\n")
        #expect(try text { b in CommandEncoder.unsubscribe(subscriptionID: 3, afterMessages: 10, into: &b) } == "UNSUB 3 10\r\n")
        #expect(try text { b in CommandEncoder.ping(into: &b); CommandEncoder.pong(into: &b) } == "PING\r\nPONG\r\n")
    }

    @Test func connectEscapesStrings() throws {
        var options = ConnectOptions(name: "node \"1\"\n")
        options.user = "u"
        options.password = "p\\w"
        let line = try text { b in CommandEncoder.connect(options, into: &b) }
        #expect(line.hasPrefix("CONNECT {\"verbose\":false,"))
        #expect(line.contains(",\"headers\":true,\"no_responders\":true,\"echo\":true"))
        #expect(line.contains(",\"name\":\"node \\\"1\\\"\\u000a\",\"user\":\"u\",\"pass\":\"p\\\\w\"}\r\n"))
        #expect(line.hasSuffix("}\r\n"))
    }

    @Test func refusesSubjectsTheProtocolCannotCarry() {
        for subject in ["", "a b", "a..b", ".a", "a.", "a\tb", "a.*", "a.>", "a\r\n", "a.b*"] {
            #expect(throws: CommandError.invalidSubject(subject)) {
                var b: [UInt8] = []
                try CommandEncoder.publish(subject: subject, payload: [UInt8](), into: &b)
            }
        }
        for subject in ["", "a.>.b", "a.b*", "*a", ">x", "a b"] {
            #expect(throws: CommandError.invalidSubject(subject)) {
                var b: [UInt8] = []
                try CommandEncoder.subscribe(subject: subject, subscriptionID: 1, into: &b)
            }
        }
        #expect(throws: CommandError.invalidQueueGroup("a b")) {
            var b: [UInt8] = []
            try CommandEncoder.subscribe(subject: "a", queueGroup: "a b", subscriptionID: 1, into: &b)
        }
    }

    @Test func wildcardsMatchTokens() {
        #expect(Subject.matches("a.b.c", pattern: "a.*.c"))
        #expect(Subject.matches("a.b.c", pattern: "a.>"))
        #expect(!Subject.matches("a", pattern: "a.>"))
        #expect(!Subject.matches("a.b", pattern: "a.*.c"))
        #expect(!Subject.matches("a.b.c", pattern: "a.b"))
        #expect(Subject.matches("$KV.leases.p1", pattern: "$KV.leases.p1"))
    }

    @Test func encodedMessagesParseBackToThemselves() throws {
        var headers = NATSHeaders()
        headers.append("Nats-Expected-Last-Sequence", "41")
        let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        var bytes: [UInt8] = []
        try CommandEncoder.publish(subject: "journal.p1", replyTo: "_INBOX.a.1", headers: headers, payload: payload, into: &bytes)
        // A server relays HPUB <subject> <reply> <h> <t> as HMSG <subject> <sid> <reply> <h> <t>.
        let afterSubjectAndReply = bytes.split(separator: UInt8(ascii: " "), maxSplits: 3)[3]
        let relayed = [UInt8]("HMSG journal.p1 5 _INBOX.a.1 ") + afterSubjectAndReply
        let outcome = verifyDripFeed(relayed)
        let block = try headers.encoded()
        #expect(outcome == [.message(subject: "journal.p1", sid: 5, replyTo: "_INBOX.a.1", headers: block, payload: payload)])
    }
}
