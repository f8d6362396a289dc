import Testing
@testable import BangbangCore

@Suite struct AcceptAndPermissionTests {
    @Test func manyAcceptsOnOneOrderHaveExactlyOneWinner() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        let runners = (10...29).map { UserID(UInt64($0)) }
        var winners: [UserID] = []
        var losers: [ErrorCode] = []
        for runner in runners {
            do {
                try driver.run(.accept(isVerifiedRunner: true), on: id, by: runner)
                winners.append(runner)
            } catch {
                losers.append(error.code)
            }
        }
        #expect(winners == [runners[0]])
        #expect(losers == Array(repeating: .orderTaken, count: runners.count - 1))
        #expect(driver.shard.order(id)?.runner == runners[0])
    }

    @Test func acceptsAcrossShardsEachHaveTheirOwnWinner() throws {
        var shards = [ShardDriver(index: 4), ShardDriver(index: 5), ShardDriver(index: 6)]
        var ids: [OrderID] = []
        for k in shards.indices { ids.append(try shards[k].publish(Fixture.express())) }
        #expect(ids.map(\.shard) == [4, 5, 6])
        #expect(Set(ids).count == 3)
        var wins = [Int](repeating: 0, count: 3)
        var taken = 0
        for round in 0..<12 {
            let runner = UserID(UInt64(100 + round))
            let id = ids[round % 3]
            // The server routes by the id alone.
            let shard = shards.firstIndex { $0.shard.index == id.shard }!
            do {
                try shards[shard].run(.accept(isVerifiedRunner: true), on: id, by: runner)
                wins[shard] += 1
            } catch {
                #expect(error.code == .orderTaken)
                taken += 1
            }
        }
        #expect(wins == [1, 1, 1])
        #expect(taken == 9)
        let misrouted = domainError { () throws(DomainError) in
            try shards[0].run(.accept(isVerifiedRunner: true), on: ids[1], by: Fixture.rival)
        }
        #expect(misrouted?.code == .notFound)
    }

    @Test func acceptOfClosedOrderIsOrderClosed() throws {
        var driver = ShardDriver()
        let cancelled = try driver.publish(Fixture.express())
        try driver.run(.cancel(reason: nil), on: cancelled, by: Fixture.publisher)
        let error = domainError { () throws(DomainError) in
            try driver.run(.accept(isVerifiedRunner: true), on: cancelled, by: Fixture.runner)
        }
        #expect(error?.code == .orderClosed)
    }

    @Test func acceptAtTheDeadlineIsClosedEvenBeforeExpiryIsApplied() throws {
        var driver = ShardDriver()
        let deadline = Fixture.now.adding(milliseconds: Fixture.hour)
        let id = try driver.publish(Fixture.express(deadline: deadline))
        var late = driver
        let error = domainError { () throws(DomainError) in
            try late.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner, at: deadline)
        }
        #expect(error?.code == .orderClosed)
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner, at: deadline.adding(milliseconds: -1))
        #expect(driver.status(id) == .accepted)
    }

    @Test func publisherCannotAcceptOwnOrder() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        let error = domainError { () throws(DomainError) in
            try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.publisher)
        }
        #expect(error?.code == .forbidden)
    }

    @Test func unverifiedRunnerIsRefused() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        let error = domainError { () throws(DomainError) in
            try driver.run(.accept(isVerifiedRunner: false), on: id, by: Fixture.runner)
        }
        #expect(error?.code == .runnerNotVerified)
        #expect(driver.status(id) == .open)
    }

    @Test func groupOrdersAreJoinedNotAccepted() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group())
        let error = domainError { () throws(DomainError) in
            try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        }
        #expect(error?.code == .invalidTransition)
    }

    @Test func onlyTheAssignedRunnerReportsProgress() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        for user in [Fixture.publisher, Fixture.rival] {
            for command in [OrderCommand.pickUp, .deliver(code: nil), .abandon] {
                let error = domainError { () throws(DomainError) in try driver.run(command, on: id, by: user) }
                #expect(error?.code == .notYourOrder, "\(command) by \(user)")
            }
        }
        try driver.run(.pickUp, on: id, by: Fixture.runner)
        #expect(driver.status(id) == .pickedUp)
    }

    @Test func onlyThePublisherConfirmsCancelsAndBumps() throws {
        var driver = ShardDriver()
        let open = try driver.publish(Fixture.express())
        for command in [OrderCommand.cancel(reason: "x"), .raiseTip(to: 1_000)] {
            let error = domainError { () throws(DomainError) in try driver.run(command, on: open, by: Fixture.runner) }
            #expect(error?.code == .notYourOrder)
        }
        try driver.run(.accept(isVerifiedRunner: true), on: open, by: Fixture.runner)
        try driver.run(.pickUp, on: open, by: Fixture.runner)
        try driver.run(.deliver(code: nil), on: open, by: Fixture.runner)
        let error = domainError { () throws(DomainError) in try driver.run(.confirm, on: open, by: Fixture.runner) }
        #expect(error?.code == .notYourOrder)
    }

    @Test func eventsNotifyEveryPartyAndTheActor() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        let accepted = try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        #expect(accepted.event.notify == [Fixture.publisher, Fixture.runner])
        #expect(accepted.before?.status == .open)
        #expect(accepted.after.status == .accepted)
        let cancelled = try driver.run(.cancel(reason: "no longer needed"), on: id, by: Fixture.publisher)
        #expect(cancelled.event.notify == [Fixture.publisher, Fixture.runner])
    }
}
