// The rating window and the move to the archive: ratings close `ratingWindow` after the order
// closed, and only then may a closed order leave the shard, taking its index entries with it.
import Testing
@testable import BangbangCore

@Suite struct ArchivingTests {
    static let day: Int64 = 86_400_000

    func completedOrder(_ driver: inout ShardDriver, at now: Timestamp = Fixture.now) throws -> OrderID {
        let id = try driver.publish(Fixture.express(deadline: now.adding(milliseconds: Fixture.hour)), at: now)
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner, at: now)
        try driver.run(.pickUp, on: id, by: Fixture.runner, at: now)
        try driver.run(.deliver(code: nil), on: id, by: Fixture.runner, at: now)
        try driver.run(.confirm, on: id, by: Fixture.publisher, at: now.adding(milliseconds: 1_000))
        return id
    }

    @Test func closedAtIsWhenTheOrderReachedItsTerminalStatus() throws {
        var driver = ShardDriver()
        let id = try completedOrder(&driver)
        #expect(driver.shard.order(id)?.closedAt == Fixture.now.adding(milliseconds: 1_000))
        try driver.run(.rate(stars: 5, comment: ""), on: id, by: Fixture.publisher, at: Fixture.now.adding(milliseconds: Self.day))
        #expect(driver.shard.order(id)?.closedAt == Fixture.now.adding(milliseconds: 1_000))
        let open = try driver.publish(Fixture.bounty())
        #expect(driver.shard.order(open)?.closedAt == nil)
    }

    @Test func ratingsCloseWhenTheWindowHasPassed() throws {
        var driver = ShardDriver()
        driver.rules.ratingWindow = 2 * Self.day
        let id = try completedOrder(&driver)
        let closedAt = try #require(driver.shard.order(id)?.closedAt)
        try driver.run(.rate(stars: 4, comment: ""), on: id, by: Fixture.runner,
                       at: closedAt.adding(milliseconds: 2 * Self.day - 1))
        let late = domainError { () throws(DomainError) in
            try driver.run(.rate(stars: 5, comment: ""), on: id, by: Fixture.publisher,
                           at: closedAt.adding(milliseconds: 2 * Self.day))
        }
        #expect(late?.code == .invalidTransition)
        #expect(late?.message == "the rating window has closed")
        #expect(driver.shard.order(id)?.ratingByPublisher == nil)
        #expect(OrderRules().ratingWindow == 7 * Self.day)
    }

    @Test func onlyAClosedOrderPastItsWindowAndArchivedAtItsRevisionMayLeave() throws {
        var driver = ShardDriver()
        let rules = driver.rules
        let id = try completedOrder(&driver)
        let order = try #require(driver.shard.order(id))
        let closedAt = try #require(order.closedAt)
        let after = closedAt.adding(milliseconds: rules.ratingWindow)
        #expect(driver.shard.decideMoveToArchive(id, archivedRevision: order.revision,
                                                 now: after.adding(milliseconds: -1), rules: rules) == nil)
        #expect(driver.shard.decideMoveToArchive(id, archivedRevision: order.revision - 1, now: after, rules: rules) == nil)
        let live = try driver.publish(Fixture.express(deadline: after.adding(milliseconds: Fixture.hour)), at: after)
        #expect(driver.shard.decideMoveToArchive(live, archivedRevision: 1, now: after.adding(milliseconds: 30 * Self.day),
                                                 rules: rules) == nil)
        #expect(driver.shard.decideMoveToArchive(OrderID(shard: 0, serial: 99), archivedRevision: 1, now: after,
                                                 rules: rules) == nil)
        let event = try #require(driver.shard.decideMoveToArchive(id, archivedRevision: order.revision, now: after, rules: rules))
        #expect(event.notify.isEmpty && event.actor == nil && event.change == .movedToArchive)
    }

    @Test func movingToTheArchiveRemovesTheOrderAndItsIndexEntries() throws {
        var driver = ShardDriver()
        let rules = driver.rules
        let kept = try completedOrder(&driver)
        let moved = try completedOrder(&driver)
        let cancelled = try driver.publish(Fixture.express())
        try driver.run(.cancel(reason: nil), on: cancelled, by: Fixture.publisher)
        let group = try driver.publish(Fixture.group(capacity: 2), by: Fixture.rival)
        try driver.run(.join, on: group, by: Fixture.stranger)
        try driver.run(.join, on: group, by: Fixture.runner)
        try driver.run(.complete, on: group, by: Fixture.rival)
        let serial = driver.shard.nextSerial
        let later = Fixture.now.adding(milliseconds: rules.ratingWindow + Self.day)
        for id in [moved, cancelled, group] {
            let revision = try #require(driver.shard.order(id)?.revision)
            let event = try #require(driver.shard.decideMoveToArchive(id, archivedRevision: revision, now: later, rules: rules))
            let applied = driver.record(event)
            #expect(applied.after.id == id && applied.before?.id == id)
            #expect(driver.shard.order(id) == nil)
        }
        #expect(driver.shard.orders.keys.sorted() == [kept])
        #expect(driver.shard.publishedBy == [Fixture.publisher: [kept]])
        #expect(driver.shard.runningBy == [Fixture.runner: [kept]])
        #expect(driver.shard.joinedBy.isEmpty)
        #expect(driver.shard.nextSerial == serial)
        #expect(driver.shard.earnings(of: Fixture.runner).completedCount == 1)
        // Replay from the journal gives the same shard, and ids are never reused.
        var replayed = BoardShard(index: 0)
        for event in driver.journal { replayed.apply(event) }
        #expect(replayed == driver.shard)
        let next = try driver.publish(Fixture.express(deadline: later.adding(milliseconds: Fixture.hour)), at: later)
        #expect(next.serial == serial)
    }
}
