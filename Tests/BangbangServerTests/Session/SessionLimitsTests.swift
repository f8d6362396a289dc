// A connection's own request rate: a burst within the bucket is served, the next request is
// refused with how long to wait, and a connection that keeps sending through a burst's worth
// of refusals in a row is closed with 1008 behind the replies it was already sent.
import BangbangProtocol
import Testing
import TestSupport
@testable import BangbangServer

@Suite struct SessionLimitsTests {
    @Test func requestsOverTheConnectionRateAreRefusedThenAFloodIsClosed() async throws {
        let application = try ApplicationHarness()
        // One request a second, bursts of two; the test runs in far less than a second.
        application.app.connectionRequestRate.withLock { $0 = 1 }
        let harness = try SessionHarness(sharing: application)
        for _ in 0..<2 {
            #expect(await harness.call("board.list")?.errorCode == "unauthenticated", "within the burst")
        }
        let refused = try #require(await harness.call("board.list"))
        #expect(refused.errorCode == "rate_limited")
        guard case .integer(let wait)? = refused["error"]?["retry_after_ms"] else {
            Issue.record("no retry_after_ms in \(refused)")
            return
        }
        #expect(wait > 0 && wait <= 1_000)
        #expect(await harness.call("board.list")?.errorCode == "rate_limited", "the second refusal in a row")
        #expect(harness.channel.isOpen)

        // The third refusal in a row is past the burst's worth: no answer, and a 1008 close.
        let before = harness.channel.texts.count
        let (session, channel) = (harness.session, harness.channel)
        harness.loop.queue.sync {
            session.webSocket(channel, didReceiveText: Array(#"{"id":99,"op":"board.list","data":{}}"#.utf8))
        }
        #expect(await eventually { channel.closeCode == .policyViolation })
        #expect(channel.texts.count == before, "a flood is not answered")
    }
}
