// The board feed as a loop's registry fans it out: watchers with one filter form one group, each
// group is sent what a change shows its filter, and a session that changes or drops its filter,
// or closes, leaves its group.
import BangbangCore
import BangbangProtocol
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct FeedFanOutTests {
    /// Three logged-in sessions on one loop whose registry the publisher delivers to.
    static func threeWatchersOnOneLoop() async throws -> (ApplicationHarness, [SessionHarness]) {
        let application = try ApplicationHarness()
        let first = try SessionHarness(sharing: application)
        let sessions = [first, try SessionHarness(sharing: application, on: first.registry),
                        try SessionHarness(sharing: application, on: first.registry)]
        application.app.attach(to: [first.registry])
        for (index, harness) in sessions.enumerated() {
            #expect(try await harness.logIn("+861390000310\(index)").isSuccess)
        }
        return (application, sessions)
    }

    static func feedEvents(_ harness: SessionHarness) -> [(name: String, order: JSONValue?)] {
        harness.channel.pushes.compactMap { bytes in
            guard let event = try? JSONParser.parse(bytes), case .string(let name)? = event["event"],
                  name.hasPrefix("feed.") else { return nil }
            return (name, event["data"]?["order_id"] ?? event["data"]?["order"]?["id"])
        }
    }

    @Test func eachFilterIsSentWhatTheChangeShowsIt() async throws {
        let (application, sessions) = try await Self.threeWatchersOnOneLoop()
        #expect(await sessions[0].call("board.subscribe", #"{"types":["bounty"]}"#)?.isSuccess == true)
        #expect(await sessions[1].call("board.subscribe", #"{"types":["express"]}"#)?.isSuccess == true)
        #expect(await sessions[2].call("board.subscribe", #"{"types":["bounty"]}"#)?.isSuccess == true)
        #expect(sessions[0].registry.watcherGroupCount == 2, "two filters, two groups")
        let publisher = try await application.logIn("+8613900003199")
        _ = try await application.publish(Drafts.bounty(now: application.clock.now), by: publisher)
        #expect(await eventually { Self.feedEvents(sessions[0]).count == 1 && Self.feedEvents(sessions[2]).count == 1 })
        #expect(Self.feedEvents(sessions[0]).map(\.name) == ["feed.enter"])
        #expect(Self.feedEvents(sessions[1]).isEmpty, "an express watcher is not sent a bounty")
        _ = try await application.publish(Drafts.express(now: application.clock.now), by: publisher)
        #expect(await eventually { Self.feedEvents(sessions[1]).count == 1 })
        #expect(Self.feedEvents(sessions[0]).count == 1 && Self.feedEvents(sessions[2]).count == 1)
    }

    @Test func aNewFilterMovesTheSessionAndNoFilterStopsTheFeed() async throws {
        let (application, sessions) = try await Self.threeWatchersOnOneLoop()
        #expect(await sessions[0].call("board.subscribe", #"{"types":["bounty"]}"#)?.isSuccess == true)
        #expect(await sessions[1].call("board.subscribe", #"{"types":["express"]}"#)?.isSuccess == true)
        #expect(await sessions[1].call("board.subscribe", #"{"types":["bounty"]}"#)?.isSuccess == true)
        #expect(sessions[0].registry.watcherGroupCount == 1, "the emptied group is gone")
        let publisher = try await application.logIn("+8613900003199")
        let first = try await application.publish(Drafts.bounty(now: application.clock.now), by: publisher)
        #expect(await eventually { Self.feedEvents(sessions[1]).count == 1 })
        #expect(Self.feedEvents(sessions[1]).first?.order == .integer(Int64(first.rawValue)))
        #expect(await sessions[1].call("board.unsubscribe")?.isSuccess == true)
        #expect(sessions[0].registry.watcherGroupCount == 1)
        _ = try await application.publish(Drafts.bounty(now: application.clock.now), by: publisher)
        #expect(await eventually { Self.feedEvents(sessions[0]).count == 2 })
        #expect(Self.feedEvents(sessions[1]).count == 1, "no feed after unsubscribing")
    }

    @Test func aClosedSessionLeavesItsGroup() async throws {
        let (application, sessions) = try await Self.threeWatchersOnOneLoop()
        for harness in sessions {
            #expect(await harness.call("board.subscribe", #"{"types":["bounty"]}"#)?.isSuccess == true)
        }
        let watchers = application.app.publisher.boards.feedWatchers
        #expect(watchers.count.load(ordering: .relaxed) == 3)
        let closing = sessions[1]
        closing.loop.queue.sync { closing.session.webSocketDidClose(closing.channel) }
        #expect(watchers.count.load(ordering: .relaxed) == 2)
        let publisher = try await application.logIn("+8613900003199")
        _ = try await application.publish(Drafts.bounty(now: application.clock.now), by: publisher)
        #expect(await eventually { Self.feedEvents(sessions[0]).count == 1 && Self.feedEvents(sessions[2]).count == 1 })
        #expect(Self.feedEvents(closing).isEmpty)
        closing.loop.queue.sync {}
        #expect(sessions[0].registry.watcherGroupCount == 1)
    }
}
