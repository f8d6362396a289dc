import Foundation
import Testing
import TestSupport
@testable import BangbangCore

extension OrderChange {
    var kind: String { String(String(describing: self).prefix { $0 != "(" }) }
}

@Suite struct FeedTests {
    /// A subscriber's list maintained only from feed deltas.
    struct Subscriber {
        let filter: FeedFilter
        var list: Set<OrderID> = []
        var log: [FeedChange] = []

        init(_ filter: FeedFilter) { self.filter = filter }

        mutating func receive(_ applied: AppliedOrderChange) {
            guard let change = filter.change(before: applied.before, after: applied.after) else { return }
            log.append(change)
            switch change {
            case .enter: #expect(list.insert(applied.after.id).inserted)
            case .update: #expect(list.contains(applied.after.id))
            case .leave: #expect(list.remove(applied.after.id) != nil)
            }
        }

        /// The list equals what a fresh listing with the same filter returns.
        func isExact(_ shard: BoardShard) -> Bool {
            Set(shard.listOpen(OrderListQuery(filter: filter, limit: 100)).items.map(\.id)) == list
        }
    }

    @Test func singleRunnerOrderEntersUpdatesAndLeaves() throws {
        var driver = ShardDriver()
        var watcher = Subscriber(FeedFilter(types: [.express]))
        var bountyWatcher = Subscriber(FeedFilter(types: [.bounty]))
        func deliver(_ applied: AppliedOrderChange) {
            watcher.receive(applied)
            bountyWatcher.receive(applied)
        }
        let published = try driver.publishing(Fixture.express(tip: 300))
        let id = published.after.id
        deliver(published)
        deliver(try driver.run(.raiseTip(to: 400), on: id, by: Fixture.publisher))
        deliver(try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner))
        deliver(try driver.run(.abandon, on: id, by: Fixture.runner))
        deliver(try driver.run(.cancel(reason: nil), on: id, by: Fixture.publisher))
        #expect(watcher.log == [.enter, .update, .leave, .enter, .leave])
        #expect(bountyWatcher.log.isEmpty)
        #expect(watcher.isExact(driver.shard))
    }

    @Test func expiryLeavesTheFeed() throws {
        var driver = ShardDriver()
        var watcher = Subscriber(FeedFilter())
        watcher.receive(try driver.publishing(Fixture.express()))
        let deadline = Fixture.now.adding(milliseconds: Fixture.hour)
        for event in driver.shard.dueTransitions(now: deadline) { watcher.receive(driver.record(event)) }
        #expect(watcher.log == [.enter, .leave])
        #expect(watcher.list.isEmpty)
    }

    @Test func tipBumpCanBringAnOrderIntoAMinimumTipFilter() throws {
        var driver = ShardDriver()
        var watcher = Subscriber(FeedFilter(minimumTip: 1_000))
        let published = try driver.publishing(Fixture.express(tip: 300))
        watcher.receive(published)
        watcher.receive(try driver.run(.raiseTip(to: 999), on: published.after.id, by: Fixture.publisher))
        #expect(watcher.log.isEmpty)
        watcher.receive(try driver.run(.raiseTip(to: 1_000), on: published.after.id, by: Fixture.publisher))
        #expect(watcher.log == [.enter])
        #expect(watcher.isExact(driver.shard))
    }

    @Test func groupLeavesWhenFullAndReentersWhenAShareFreesUp() throws {
        var driver = ShardDriver()
        var watcher = Subscriber(FeedFilter(types: [.group], campus: "north", keyword: "AIRPORT"))
        let published = try driver.publishing(Fixture.group(capacity: 2))
        let id = published.after.id
        watcher.receive(published)
        watcher.receive(try driver.run(.join, on: id, by: UserID(10)))
        watcher.receive(try driver.run(.join, on: id, by: UserID(11)))
        watcher.receive(try driver.run(.leave, on: id, by: UserID(10)))
        #expect(watcher.log == [.enter, .update, .leave, .enter])
        #expect(watcher.isExact(driver.shard))
    }

    @Test func filterMismatchesAreIgnored() throws {
        var driver = ShardDriver()
        let filters = [FeedFilter(campus: "south"), FeedFilter(keyword: "nothing like this"), FeedFilter(types: [.purchase])]
        let published = try driver.publishing(Fixture.express())
        for filter in filters {
            #expect(filter.change(before: published.before, after: published.after) == nil)
        }
        #expect(FeedFilter(keyword: "   ").keyword == "   ")
        #expect(FeedFilter(keyword: "").keyword == nil)
    }

    @Test func keywordsNeverMatchPrivateFields() throws {
        var driver = ShardDriver()
        let published = try driver.publishing(Fixture.express())
        #expect(FeedFilter(keyword: "8-2-1043").matches(published.after) == false)
        #expect(FeedFilter(keyword: "512").matches(published.after) == false)
        #expect(FeedFilter(keyword: "cainiao").matches(published.after))
    }

    @Test func keywordsMatchTheTextFieldsButNotTheCampus() throws {
        var driver = ShardDriver()
        let published = try driver.publishing(Fixture.express(campus: "Zijingang"))
        #expect(FeedFilter(keyword: "zijin").matches(published.after) == false, "the campus has a filter of its own")
        #expect(FeedFilter(campus: "Zijingang").matches(published.after))
        #expect(FeedFilter(keyword: "STATION").matches(published.after))
    }

    @Test func ordersRecordedWithTheCampusInTheirSearchTextAreMatchedWithoutIt() throws {
        // Orders published before 2026-12-01 were stored with "\n" + the campus in their search
        // text; replaying such a journal, or decoding such a snapshot, drops it.
        var driver = ShardDriver()
        let event = try driver.shard.decidePublish(Fixture.express(campus: "Zijingang"), by: Fixture.publisher,
                                                   now: Fixture.now, rules: Fixture.rules, using: &driver.random)
        guard case .published(var recorded) = event.change else { Issue.record("not a publish"); return }
        recorded.searchText += "\nzijingang"
        var replayed = BoardShard(index: 0)
        let applied = replayed.apply(OrderEvent(orderID: recorded.id, at: event.at, actor: event.actor,
                                                change: .published(recorded), notify: event.notify))
        #expect(FeedFilter(keyword: "zijin").matches(applied.after) == false)

        // A snapshot of that time: the same shard with the old search text written out.
        var snapshot = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(replayed)) as? [String: Any])
        var orders = try #require(snapshot["orders"] as? [[String: Any]])
        orders[0]["searchText"] = recorded.searchText
        snapshot["orders"] = orders
        let decoded = try JSONDecoder().decode(BoardShard.self, from: JSONSerialization.data(withJSONObject: snapshot))
        #expect(decoded.order(recorded.id)?.searchText == recorded.details.searchText)
        #expect(FeedFilter(keyword: "zijin").matches(try #require(decoded.order(recorded.id))) == false)
    }

    @Test func randomHistoryKeepsEverySubscriberExact() throws {
        var driver = ShardDriver()
        var random = SeededGenerator(seed: 7)
        var watchers = [Subscriber(FeedFilter()), Subscriber(FeedFilter(minimumTip: 500)),
                        Subscriber(FeedFilter(types: [.bounty, .group])), Subscriber(FeedFilter(campus: "south"))]
        let drafts = [Fixture.express(tip: 300), Fixture.bounty(tip: 500), Fixture.group(capacity: 2),
                      Fixture.express(tip: 800, campus: "south")]
        var ids: [OrderID] = []
        var changeCounts: [String: Int] = [:]
        let users = (10...14).map { UserID(UInt64($0)) }
        for step in 0..<400 {
            let now = Fixture.now.adding(milliseconds: Int64(step))
            let applied: AppliedOrderChange?
            if ids.isEmpty || random.next() % 5 == 0 {
                let change = try driver.publishing(drafts[Int(random.next() % 4)], at: now)
                ids.append(change.after.id)
                applied = change
            } else {
                let id = ids[Int(random.next() % UInt64(ids.count))]
                let user = users[Int(random.next() % UInt64(users.count))]
                let commands: [OrderCommand] = [.accept(isVerifiedRunner: true), .abandon, .join, .leave,
                                                .raiseTip(to: Cents(random.next() % 2_000)), .cancel(reason: "x")]
                let command = commands[Int(random.next() % UInt64(commands.count))]
                let actor: UserID
                switch command {
                case .cancel, .raiseTip: actor = Fixture.publisher
                case .abandon: actor = driver.shard.order(id)?.runner ?? user
                default: actor = user
                }
                applied = try? driver.run(command, on: id, by: actor, at: now)
            }
            #expect(driver.shard.nextDueTime == driver.shard.scanEarliestDue())
            if let applied {
                changeCounts[applied.event.change.kind, default: 0] += 1
                for k in watchers.indices { watchers[k].receive(applied) }
            }
        }
        for watcher in watchers { #expect(watcher.isExact(driver.shard)) }
        #expect(watchers[0].log.contains(.update))
        for kind in ["published", "accepted", "abandoned", "joined", "left", "tipRaised", "cancelled"] {
            #expect(changeCounts[kind, default: 0] > 0, "no \(kind) in the history")
        }
    }
}
