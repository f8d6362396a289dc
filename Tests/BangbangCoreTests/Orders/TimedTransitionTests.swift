import Testing
@testable import BangbangCore

@Suite struct TimedTransitionTests {
    let hour = Fixture.hour

    @Test func openOrderExpiresExactlyAtItsDeadline() throws {
        var driver = ShardDriver()
        let deadline = Fixture.now.adding(milliseconds: hour)
        let id = try driver.publish(Fixture.express(deadline: deadline))
        #expect(driver.shard.nextDueTime == deadline)
        #expect(driver.tick(deadline.adding(milliseconds: -1)).isEmpty)
        let events = driver.tick(deadline)
        #expect(events.map(\.change) == [.expired])
        #expect(events.first?.notify == [Fixture.publisher])
        #expect(driver.status(id) == .expired)
        #expect(driver.shard.nextDueTime == nil)
        #expect(driver.shard.listOpen(OrderListQuery()).items.isEmpty)
    }

    @Test func acceptedOrderDoesNotExpire() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        #expect(driver.shard.nextDueTime == nil)
        #expect(driver.tick(Fixture.now.adding(milliseconds: 10 * hour)).isEmpty)
    }

    @Test func deliveredOrderAutoConfirmsAtTheConfiguredTime() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        try driver.run(.pickUp, on: id, by: Fixture.runner)
        let deliveredAt = Fixture.now.adding(milliseconds: 1_000)
        try driver.run(.deliver(code: nil), on: id, by: Fixture.runner, at: deliveredAt)
        let due = deliveredAt.adding(milliseconds: Fixture.rules.autoConfirmAfter)
        #expect(driver.shard.nextDueTime == due)
        #expect(driver.tick(due.adding(milliseconds: -1)).isEmpty)
        let events = driver.tick(due)
        #expect(events.map(\.change) == [.confirmed(automatic: true)])
        #expect(events.first?.notify == [Fixture.publisher, Fixture.runner])
        #expect(driver.status(id) == .completed)
        #expect(driver.shard.order(id)?.timeline.last?.at == due)
    }

    @Test func groupBelowQuorumCancelsItselfAtClosingTime() throws {
        var driver = ShardDriver()
        let closesAt = Fixture.now.adding(milliseconds: hour)
        let id = try driver.publish(Fixture.group(capacity: 4, minimumFill: 3, closesAt: closesAt))
        try driver.run(.join, on: id, by: UserID(10))
        try driver.run(.join, on: id, by: UserID(11))
        #expect(driver.shard.nextDueTime == closesAt)
        #expect(driver.tick(closesAt.adding(milliseconds: -1)).isEmpty)
        let events = driver.tick(closesAt)
        #expect(events.count == 1)
        #expect(events.first?.notify == [Fixture.publisher, UserID(10), UserID(11)])
        let order = try #require(driver.shard.order(id))
        #expect(order.status == .cancelled)
        #expect(order.cancellation?.cause == .quorumNotReached)
    }

    @Test func groupAtQuorumClosesAtClosingTimeThenCompletesAtItsDeadline() throws {
        var driver = ShardDriver()
        let closesAt = Fixture.now.adding(milliseconds: hour)
        let deadline = Fixture.now.adding(milliseconds: 2 * hour)
        let id = try driver.publish(Fixture.group(capacity: 4, minimumFill: 2, closesAt: closesAt, deadline: deadline))
        try driver.run(.join, on: id, by: UserID(10))
        try driver.run(.join, on: id, by: UserID(11))
        #expect(driver.shard.nextDueTime == closesAt)
        #expect(driver.tick(closesAt.adding(milliseconds: -1)).isEmpty)
        let closing = driver.shard.dueTransitions(now: closesAt)
        #expect(closing.map(\.change) == [.closedForJoining])
        let applied = driver.record(closing[0])
        #expect(FeedFilter().change(before: applied.before, after: applied.after) == .leave)
        #expect(driver.status(id) == .full)
        let late = domainError { () throws(DomainError) in try driver.run(.join, on: id, by: UserID(12), at: closesAt) }
        #expect(late?.code == .orderClosed)
        #expect(driver.shard.nextDueTime == deadline)
        #expect(driver.tick(deadline.adding(milliseconds: -1)).isEmpty)
        #expect(driver.tick(deadline).map(\.change) == [.groupCompleted(automatic: true)])
        #expect(driver.status(id) == .completed)
        #expect(driver.shard.nextDueTime == nil)
    }

    @Test func fullGroupCompletesAtItsDeadline() throws {
        var driver = ShardDriver()
        let deadline = Fixture.now.adding(milliseconds: 2 * hour)
        let id = try driver.publish(Fixture.group(capacity: 2, deadline: deadline))
        try driver.run(.join, on: id, by: UserID(10))
        try driver.run(.join, on: id, by: UserID(11))
        #expect(driver.shard.nextDueTime == deadline)
        #expect(driver.tick(deadline).map(\.change) == [.groupCompleted(automatic: true)])
        #expect(driver.status(id) == .completed)
    }

    @Test func groupClosingAtItsDeadlineCompletesAtOnce() throws {
        var driver = ShardDriver()
        let deadline = Fixture.now.adding(milliseconds: hour)
        let id = try driver.publish(Fixture.group(capacity: 3, closesAt: deadline, deadline: deadline))
        try driver.run(.join, on: id, by: UserID(10))
        #expect(driver.tick(deadline).map(\.change) == [.groupCompleted(automatic: true)])
        #expect(driver.status(id) == .completed)
    }

    @Test func groupNobodyJoinedExpiresAtItsClosingTime() throws {
        var driver = ShardDriver()
        let closesAt = Fixture.now.adding(milliseconds: hour)
        let id = try driver.publish(Fixture.group(closesAt: closesAt))
        #expect(driver.tick(closesAt.adding(milliseconds: -1)).isEmpty)
        #expect(driver.tick(closesAt).map(\.change) == [.expired])
        #expect(driver.status(id) == .expired)
    }

    @Test func nextDueTimeFollowsTheEarliestTimerAsOrdersComeAndGo() throws {
        var driver = ShardDriver()
        let deadlines = [5, 2, 9, 2, 7].map { Fixture.now.adding(milliseconds: Int64($0) * hour) }
        var ids: [OrderID] = []
        for deadline in deadlines { ids.append(try driver.publish(Fixture.express(deadline: deadline))) }
        #expect(driver.shard.nextDueTime == deadlines[1])
        try driver.run(.accept(isVerifiedRunner: true), on: ids[1], by: Fixture.runner)
        #expect(driver.shard.nextDueTime == deadlines[1])
        try driver.run(.cancel(reason: nil), on: ids[3], by: Fixture.publisher)
        #expect(driver.shard.nextDueTime == deadlines[0])
        try driver.run(.abandon, on: ids[1], by: Fixture.runner)
        #expect(driver.shard.nextDueTime == deadlines[1])
        driver.tick(deadlines[0])
        #expect(driver.shard.nextDueTime == deadlines[4])
        #expect(driver.shard.nextDueTime == driver.shard.scanEarliestDue())
    }

    @Test func recoveryAfterDowntimeAppliesEverythingOverdueStampedWithItsDueTime() throws {
        var driver = ShardDriver()
        let early = Fixture.now.adding(milliseconds: hour)
        let late = Fixture.now.adding(milliseconds: 3 * hour)
        let a = try driver.publish(Fixture.express(deadline: late))
        let b = try driver.publish(Fixture.express(deadline: early))
        let c = try driver.publish(Fixture.express())
        try driver.run(.accept(isVerifiedRunner: true), on: c, by: Fixture.runner)
        try driver.run(.pickUp, on: c, by: Fixture.runner)
        try driver.run(.deliver(code: nil), on: c, by: Fixture.runner)

        // The process stops; a day and more later it replays the journal and asks the clock.
        var recovered = BoardShard(index: 0)
        for event in driver.journal { recovered.apply(event) }
        #expect(recovered == driver.shard)
        let restart = Fixture.now.adding(milliseconds: 48 * hour)
        let due = recovered.dueTransitions(now: restart)
        #expect(due.map(\.orderID) == [b, a, c])
        #expect(due.map(\.at) == [early, late, Fixture.now.adding(milliseconds: Fixture.rules.autoConfirmAfter)])
        for event in due { recovered.apply(event) }
        #expect(recovered.order(a)?.status == .expired)
        #expect(recovered.order(b)?.status == .expired)
        #expect(recovered.order(c)?.status == .completed)
        #expect(recovered.nextDueTime == nil)
        #expect(recovered.dueTransitions(now: restart).isEmpty)
    }
}
