// A connection's own request rate: a burst within the bucket is served, the next request is
// refused with how long to wait, and a connection that keeps sending through a burst's worth
// of refusals in a row is closed with 1008 behind the replies it was already sent.
import BangbangProtocol
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct SessionLimitsTests {
    @Test func requestsOverTheConnectionRateAreRefusedThenAFloodIsClosed() async throws {
        let application = try ApplicationHarness()
        // One request a second, bursts of two. The requests arrive in one loop turn, so the
        // bucket cannot refill between them however slowly the test runs.
        application.app.connectionRequestRate.withLock { $0 = 1 }
        let harness = try SessionHarness(sharing: application)
        let (session, channel) = (harness.session, harness.channel)
        harness.loop.queue.sync {
            for id in 1...5 {
                session.webSocket(channel, didReceiveText: Array(#"{"id":\#(id),"op":"board.list","data":{}}"#.utf8))
            }
        }
        // Two within the burst, two refusals in a row, and the fifth, past a burst's worth of
        // refusals, closes the connection without an answer.
        #expect(await eventually { channel.texts.count >= 4 && channel.closeCode != nil })
        let replies = try channel.texts.map { try JSONParser.parse($0) }
        #expect(replies.map(\.errorCode) == ["unauthenticated", "unauthenticated", "rate_limited", "rate_limited"])
        #expect(replies.map { $0["id"] } == (1...4).map { JSONValue.integer(Int64($0)) })
        guard case .integer(let wait)? = replies[2]["error"]?["retry_after_ms"] else {
            Issue.record("no retry_after_ms in \(replies[2])")
            return
        }
        #expect(wait > 0 && wait <= 1_000)
        #expect(channel.closeCode == .policyViolation)
        #expect(channel.texts.count == 4, "a flood is not answered")
    }
}
