import Testing
@testable import BangbangCore

@Suite struct GroupOrderTests {
    let a = UserID(10), b = UserID(11), c = UserID(12)

    @Test func joinsFillTheGroupAndALeaveReopensIt() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group(capacity: 2))
        try driver.run(.join, on: id, by: a)
        #expect(driver.status(id) == .open)
        let filled = try driver.run(.join, on: id, by: b)
        #expect(filled.after.status == .full)
        #expect(filled.after.participants == [a, b])
        let full = domainError { () throws(DomainError) in try driver.run(.join, on: id, by: c) }
        #expect(full?.code == .groupFull)
        let left = try driver.run(.leave, on: id, by: a)
        #expect(left.after.status == .open)
        #expect(left.event.notify.contains(a))
        try driver.run(.join, on: id, by: c)
        #expect(driver.shard.order(id)?.participants == [b, c])
        #expect(driver.shard.orders(of: c, role: .joined, scope: .active).map(\.id) == [id])
        #expect(driver.shard.orders(of: a, role: .joined, scope: .all).isEmpty)
    }

    @Test func publisherCannotJoinAndNobodyJoinsTwice() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group())
        let own = domainError { () throws(DomainError) in try driver.run(.join, on: id, by: Fixture.publisher) }
        #expect(own?.code == .forbidden)
        try driver.run(.join, on: id, by: a)
        let twice = domainError { () throws(DomainError) in try driver.run(.join, on: id, by: a) }
        #expect(twice?.code == .alreadyJoined)
        let notIn = domainError { () throws(DomainError) in try driver.run(.leave, on: id, by: b) }
        #expect(notIn?.code == .notJoined)
    }

    @Test func joiningAndLeavingStopAtTheClosingTime() throws {
        var driver = ShardDriver()
        let closesAt = Fixture.now.adding(milliseconds: Fixture.hour)
        let id = try driver.publish(Fixture.group(closesAt: closesAt))
        try driver.run(.join, on: id, by: a, at: closesAt.adding(milliseconds: -1))
        let join = domainError { () throws(DomainError) in try driver.run(.join, on: id, by: b, at: closesAt) }
        #expect(join?.code == .orderClosed)
        let leave = domainError { () throws(DomainError) in try driver.run(.leave, on: id, by: a, at: closesAt) }
        #expect(leave?.code == .orderClosed)
        try driver.run(.leave, on: id, by: a, at: closesAt.adding(milliseconds: -1))
    }

    @Test func publisherCompletesWhenFullOrAfterClosing() throws {
        var driver = ShardDriver()
        let closesAt = Fixture.now.adding(milliseconds: Fixture.hour)
        let id = try driver.publish(Fixture.group(capacity: 3, closesAt: closesAt))
        try driver.run(.join, on: id, by: a)
        let early = domainError { () throws(DomainError) in try driver.run(.complete, on: id, by: Fixture.publisher) }
        #expect(early?.code == .invalidTransition)
        let notPublisher = domainError { () throws(DomainError) in
            try driver.run(.complete, on: id, by: a, at: closesAt)
        }
        #expect(notPublisher?.code == .notYourOrder)
        let done = try driver.run(.complete, on: id, by: Fixture.publisher, at: closesAt)
        #expect(done.after.status == .completed)
        #expect(done.event.notify == [Fixture.publisher, a])

        let full = try driver.publish(Fixture.group(capacity: 2))
        try driver.run(.join, on: full, by: a)
        try driver.run(.join, on: full, by: b)
        try driver.run(.complete, on: full, by: Fixture.publisher)
        #expect(driver.status(full) == .completed)
    }

    @Test func emptyGroupCannotComplete() throws {
        var driver = ShardDriver()
        let closesAt = Fixture.now.adding(milliseconds: Fixture.hour)
        let id = try driver.publish(Fixture.group(closesAt: closesAt))
        let error = domainError { () throws(DomainError) in
            try driver.run(.complete, on: id, by: Fixture.publisher, at: closesAt)
        }
        #expect(error?.code == .invalidTransition)
    }

    @Test func publisherCancelTellsEveryParticipant() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group(capacity: 2))
        try driver.run(.join, on: id, by: a)
        try driver.run(.join, on: id, by: b)
        let cancelled = try driver.run(.cancel(reason: nil), on: id, by: Fixture.publisher)
        #expect(cancelled.after.status == .cancelled)
        #expect(cancelled.event.notify == [Fixture.publisher, a, b])
        let late = domainError { () throws(DomainError) in try driver.run(.leave, on: id, by: a) }
        #expect(late?.code == .invalidTransition)
    }

    @Test func aGroupOrderHasNoTipToRaise() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group())
        for actor in [Fixture.publisher, a] {
            let error = domainError { () throws(DomainError) in try driver.run(.raiseTip(to: 500), on: id, by: actor) }
            #expect(error?.code == .invalidTransition)
        }
        #expect(driver.shard.order(id)?.tip == 0)
    }

    @Test func runnerActionsDoNotApplyToGroups() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group())
        try driver.run(.join, on: id, by: a)
        for command in [OrderCommand.pickUp, .start, .deliver(code: nil), .abandon] {
            let error = domainError { () throws(DomainError) in try driver.run(command, on: id, by: a) }
            #expect(error?.code == .notYourOrder)
        }
    }
}
