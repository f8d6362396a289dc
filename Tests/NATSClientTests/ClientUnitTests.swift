import NATSProtocol
import Testing
import TestSupport
@testable import NATSClient
import JSON

enum JSONParserShim {
    static func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }
}

/// The client's sans-I/O parts, without a server.
@Suite struct ClientUnitTests {
    private let servers = (1...3).map { NATSServerAddress(host: "127.0.0.1", port: 4220 + $0) }

    @Test func aRoundOfServersIsTriedWithoutWaitingThenTheWaitDoublesUpToTheMaximum() {
        var pool = ServerPool(servers: servers, initialWait: 100, maximumWait: 400)
        var random = SeededGenerator(seed: 7)
        var attempts: [(Int, Int)] = []
        for _ in 0..<12 {
            let attempt = pool.nextAttempt(using: &random)
            attempts.append((attempt.server.port, attempt.waitMilliseconds))
            pool.recordFailure()
        }
        #expect(attempts.map(\.0) == [4221, 4222, 4223, 4221, 4222, 4223, 4221, 4222, 4223, 4221, 4222, 4223])
        let bases = [0, 0, 0, 100, 0, 0, 200, 0, 0, 400, 0, 0]
        for (wait, base) in zip(attempts.map(\.1), bases) { #expect(wait >= base && wait <= base + base / 2) }
        #expect(pool.hasFailedEveryServer)
    }

    @Test func jitterAddsAtMostHalfTheWait() {
        var pool = ServerPool(servers: [servers[0]], initialWait: 100, maximumWait: 100)
        var random = SystemRandomNumberGenerator()
        _ = pool.nextAttempt(using: &random)
        for _ in 0..<50 {
            pool.recordFailure()
            let wait = pool.nextAttempt(using: &random).waitMilliseconds
            #expect((100...150).contains(wait))
        }
    }

    @Test func aSuccessStartsTheRoundsAgainAndAfterALossTheNextServerIsTriedAtOnce() {
        var pool = ServerPool(servers: servers, initialWait: 100, maximumWait: 400)
        var random = SeededGenerator(seed: 7)
        for _ in 0..<4 {
            _ = pool.nextAttempt(using: &random)
            pool.recordFailure()
        }
        let connected = pool.nextAttempt(using: &random)
        pool.recordSuccess()
        #expect(!pool.hasFailedEveryServer)
        let next = pool.nextAttempt(using: &random)
        #expect(next.waitMilliseconds == 0)
        #expect(next.server != connected.server)
    }

    @Test func serversAnnouncedByTheClusterJoinThePoolOnce() {
        var pool = ServerPool(servers: [servers[0]], initialWait: 10, maximumWait: 10)
        pool.add(urls: ["127.0.0.1:4222", "nats://127.0.0.1:4221", "[::1]:4225", "not a url:x"])
        #expect(pool.servers.map(\.description) == ["nats://127.0.0.1:4221", "nats://127.0.0.1:4222", "nats://[::1]:4225"])
    }

    @Test func serverAddressesParseTheUsualForms() {
        #expect(NATSServerAddress(url: "nats://10.0.0.1:4333") == NATSServerAddress(host: "10.0.0.1", port: 4333))
        #expect(NATSServerAddress(url: "nats.local") == NATSServerAddress(host: "nats.local", port: 4222))
        #expect(NATSServerAddress(url: "nats://user:pw@h:1") == NATSServerAddress(host: "h", port: 1))
        #expect(NATSServerAddress(url: "[fe80::1]:7") == NATSServerAddress(host: "fe80::1", port: 7))
        for bad in ["", "h:0", "h:70000", "h:x", "[::1", "[::1]x"] { #expect(NATSServerAddress(url: bad) == nil, "\(bad)") }
    }

    @Test func acknowledgementSubjectsGiveSequencesInBothForms() throws {
        let old = try #require(AckMetadata("$JS.ACK.ORDERS.c1.1.42.7.1700000000000000000.3"))
        #expect(old.streamSequence == 42)
        #expect(old.consumerSequence == 7)
        #expect(old.pending == 3)
        let new = try #require(AckMetadata("$JS.ACK.hub.ACCHASH.ORDERS.c1.1.42.7.1700000000000000000.3.xyz"))
        #expect(new.streamSequence == 42)
        #expect(new.pending == 3)
        for bad in [nil, "", "$JS.ACK.a.b", "_INBOX.x.1", "$JS.ACK.S.c.1.x.7.1.3"] { #expect(AckMetadata(bad) == nil) }
    }

    @Test func keysAndBucketNamesFollowTheKVRules() {
        for key in ["p1", "partition.17", "a-b_c/d=e", "Lease.X"] { #expect(KeyValueBucket.isValidKey(key, allowsWildcards: false), "\(key)") }
        for key in ["", ".a", "a.", "a..b", "a b", "a*", "*", "a.>", "ü"] {
            #expect(!KeyValueBucket.isValidKey(key, allowsWildcards: false), "\(key)")
        }
        #expect(KeyValueBucket.isValidKey("partition.*", allowsWildcards: true))
        #expect(KeyValueBucket.isValidKey(">", allowsWildcards: true))
        #expect(!KeyValueBucket.isValidKey("a.>.b", allowsWildcards: true))
        #expect(KeyValueBucket.isValidBucketName("leases-1_a"))
        #expect(!KeyValueBucket.isValidBucketName("a.b"))
        #expect(!KeyValueBucket.isValidBucketName(""))
    }

    @Test func inboxTokensAreReadFromTheSubjectBytes() {
        let prefix = "_INBOX.abc."
        func token(_ subject: String) -> UInt64? {
            Array(subject.utf8).withUnsafeBytes { InboxName.token(of: $0, prefixLength: prefix.utf8.count) }
        }
        #expect(token("_INBOX.abc.0") == 0)
        #expect(token("_INBOX.abc.18446744073") == 18_446_744_073)
        #expect(token("_INBOX.abc.") == nil)
        #expect(token("_INBOX.abc.1x") == nil)
        #expect(token("_INBOX.abc.12345678901234567890") == nil)
        #expect(InboxName.random() != InboxName.random())
        #expect(InboxName.random().utf8.count == 22)
    }

    @Test func jetStreamAnswersDecodeToTheirErrorCodes() throws {
        func view(_ payload: String, _ headers: String?) -> NATSMessage {
            let subject = Array("_INBOX.x.1".utf8)
            let body = Array(payload.utf8)
            let block = headers.map { Array($0.utf8) }
            return subject.withUnsafeBytes { subjectBytes in
                body.withUnsafeBytes { bodyBytes in
                    if let block {
                        return block.withUnsafeBytes { blockBytes in
                            NATSMessage(MessageView(subject: subjectBytes, subscriptionID: 1, replyTo: nil, headers: blockBytes, payload: bodyBytes))
                        }
                    }
                    return NATSMessage(MessageView(subject: subjectBytes, subscriptionID: 1, replyTo: nil, headers: nil, payload: bodyBytes))
                }
            }
        }
        let refused = view(#"{"type":"x","error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"}}"#, nil)
        #expect(throws: NATSClientError.jetStream(JetStreamError(code: 400, errorCode: 10071, text: "wrong last sequence: 5"))) {
            try JetStream.decode(refused)
        }
        let ack = try PublishAck(try JetStream.decode(view(#"{"stream":"S","seq":9,"duplicate":true}"#, nil)))
        #expect(ack.stream == "S" && ack.sequence == 9 && ack.isDuplicate)
        #expect(throws: NATSClientError.self) { try JetStream.decode(view("not json", nil)) }
        #expect(throws: NATSClientError.self) { try PublishAck(try JetStream.decode(view("{}", nil))) }
        let status = view("", "NATS/1.0 503\r\n\r\n")
        #expect(status.status == 503)
        #expect(status.headers?.status == 503)
        #expect(view("", "NATS/1.0\r\nA: b\r\n\r\n").status == nil)
        #expect(view("x", nil).status == nil)
    }

    @Test func storedMessagesDecodeBase64DataAndHeaders() throws {
        let value = try JSONParserShim.parse(#"{"message":{"subject":"J.a","seq":4,"hdrs":"TkFUUy8xLjANCkE6IGINCg0K","data":"aGVsbG8="}}"#)
        let message = try StoredMessage(value)
        #expect(message.subject == "J.a" && message.sequence == 4)
        #expect(message.payload == Array("hello".utf8))
        #expect(message.headers?["A"] == "b")
        let broken = try JSONParserShim.parse(#"{"message":{"subject":"J.a","seq":4,"data":"!!"}}"#)
        #expect(throws: NATSClientError.self) { try StoredMessage(broken) }
        // A sequence no stream can have is a malformed answer, not a crash.
        let negative = try JSONParserShim.parse(#"{"message":{"subject":"J.a","seq":-1,"data":"aGVsbG8="}}"#)
        #expect(throws: NATSClientError.self) { try StoredMessage(negative) }
    }
}
