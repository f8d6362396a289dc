// orders.mine and runner.earnings, gathered from every shard.
import BangbangCore
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct MyOrdersOperationsTests {
    @Test func mineListsOnlyTheSessionUsersOrders() async throws {
        let harness = try SessionHarness()
        let other = try await harness.application.logIn("+8613900003001")
        _ = try await harness.application.publish(Drafts.bounty(now: harness.application.clock.now), by: other)
        #expect(try await harness.logIn("+8613900003002").isSuccess)
        let empty = try #require(await harness.call("orders.mine"))
        #expect(empty.isSuccess, "\(empty)")
        #expect(empty["data"]?["orders"]?.arrayCount == 0, "\(empty)")
        let user = try #require(harness.session.user)
        _ = try await harness.application.publish(Drafts.bounty(now: harness.application.clock.now), by: user)
        let mine = try #require(await harness.call("orders.mine"))
        #expect(mine["data"]?["orders"]?.arrayCount == 1, "\(mine)")
    }

    @Test func theLimitIsChecked() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900003003").isSuccess)
        let reply = try #require(await harness.call("orders.mine", #"{"limit":0}"#))
        #expect(reply.errorCode == "invalid_field")
        #expect(reply["error"]?["field"] == .string("limit"))
    }

    @Test func earningsTakeNoArguments() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900003004").isSuccess)
        #expect(await harness.call("runner.earnings")?.isSuccess == true)
        #expect(await harness.call("runner.earnings", #"{"since":1}"#)?.errorCode == "invalid_field")
    }
}
