// What a session answers before any operation runs: malformed requests, unknown operations,
// operations that need a login, and binary messages (protocol/README.md, "Error precedence").
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct ClientSessionTests {
    @Test func aRequestThatIsNotJSONIsABadRequestWithoutAnID() async throws {
        let harness = try SessionHarness()
        let reply = try #require(await harness.exchange("{not json"))
        #expect(reply.errorCode == "bad_request")
        #expect(reply["id"] == .null)
        #expect(reply["ok"] == .bool(false))
        #expect(harness.channel.isOpen)
    }

    @Test func anUnknownOperationIsNamedAsSuch() async throws {
        let harness = try SessionHarness()
        let reply = try #require(await harness.call("no.such.op"))
        #expect(reply.errorCode == "unknown_operation")
    }

    @Test func operationsThatNeedALoginAreRefusedBeforeTheyRun() async throws {
        let harness = try SessionHarness()
        for op in ["orders.mine", "runner.earnings", "board.list", "auth.logout", "auth.sessions"] {
            let reply = try #require(await harness.call(op), "no reply to \(op)")
            #expect(reply.errorCode == "unauthenticated", "\(op)")
        }
    }

    @Test func anUnknownOperationIsAnsweredBeforeTheLoginCheck() async throws {
        let harness = try SessionHarness()
        #expect(await harness.call("orders.nope")?.errorCode == "unknown_operation")
    }

    @Test func aBinaryMessageClosesTheConnectionAsUnsupportedData() throws {
        let harness = try SessionHarness()
        let (session, channel) = (harness.session, harness.channel)
        harness.loop.queue.sync { session.webSocket(channel, didReceiveBinary: [1, 2, 3]) }
        #expect(channel.closeCode == .unsupportedData)
        #expect(channel.texts.isEmpty)
    }

    @Test func repliesComeBackInTheOrderOfTheRequests() async throws {
        let harness = try SessionHarness()
        for _ in 0..<5 {
            #expect(await harness.call("info.get")?.isSuccess == true)
        }
        #expect(harness.channel.texts.count == 5)
    }
}
