// board.*: listing and watching the open orders, as a session sees them.
import BangbangCore
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct BoardOperationsTests {
    /// A logged-in session and one open bounty published by someone else.
    static func boardWithOneBounty() async throws -> (SessionHarness, OrderID) {
        let harness = try SessionHarness()
        let publisher = try await harness.application.logIn("+8613900002001")
        let order = try await harness.application.publish(Drafts.bounty(now: harness.application.clock.now), by: publisher)
        #expect(try await harness.logIn("+8613900002002").isSuccess)
        return (harness, order)
    }

    @Test func theListHoldsThePublishedOrder() async throws {
        let (harness, _) = try await Self.boardWithOneBounty()
        let reply = try #require(await harness.call("board.list", #"{"types":["bounty"]}"#))
        #expect(reply.isSuccess, "\(reply)")
        #expect(reply["data"]?["orders"]?.arrayCount == 1)
        let express = try #require(await harness.call("board.list", #"{"types":["express"]}"#))
        #expect(express["data"]?["orders"]?.arrayCount == 0)
    }

    @Test func subscribingNeedsTypesAndReturnsTheListWithSequences() async throws {
        let (harness, _) = try await Self.boardWithOneBounty()
        #expect(await harness.call("board.subscribe")?.errorCode == "invalid_field")
        #expect(harness.session.feedFilter == nil, "a refused subscribe watches nothing")
        let reply = try #require(await harness.call("board.subscribe", #"{"types":["bounty"]}"#))
        #expect(reply.isSuccess, "\(reply)")
        #expect(reply["data"]?["orders"]?.arrayCount == 1)
        #expect(reply["data"]?["total"] == .integer(1))
        #expect(reply["data"]?["seq"]?["bounty"] != nil)
        #expect(harness.session.feedFilter != nil)
        #expect(await harness.call("board.unsubscribe")?.isSuccess == true)
        #expect(harness.session.feedFilter == nil)
    }

    @Test func anUnknownSortIsRefused() async throws {
        let (harness, _) = try await Self.boardWithOneBounty()
        let reply = try #require(await harness.call("board.subscribe", #"{"types":["bounty"],"sort":"sideways"}"#))
        #expect(reply.errorCode == "invalid_field")
        #expect(reply["error"]?["field"] == .string("sort"))
    }
}
