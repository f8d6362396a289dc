import Testing
@testable import BangbangCore

@Suite struct TipCancelCodeRatingTests {
    @Test func tipBumpMustExceedTheCurrentTip() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express(tip: 300))
        for tip: Cents in [300, 299, Fixture.rules.maximumTip + 1] {
            let error = domainError { () throws(DomainError) in
                try driver.run(.raiseTip(to: tip), on: id, by: Fixture.publisher)
            }
            #expect(error?.code == .invalidField && error?.field == "tip", "tip \(tip)")
        }
        try driver.run(.raiseTip(to: 301), on: id, by: Fixture.publisher)
        try driver.run(.raiseTip(to: Fixture.rules.maximumTip), on: id, by: Fixture.publisher)
        #expect(driver.shard.order(id)?.tip == Fixture.rules.maximumTip)
    }

    @Test func tipBumpOnlyWhileOpen() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        let error = domainError { () throws(DomainError) in
            try driver.run(.raiseTip(to: 1_000), on: id, by: Fixture.publisher)
        }
        #expect(error?.code == .invalidTransition)
    }

    func acceptedOrder(at acceptedAt: Timestamp) throws -> (ShardDriver, OrderID) {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner, at: acceptedAt)
        return (driver, id)
    }

    @Test func cancellationWithinGraceIsFreeAndAfterItCostsTheFee() throws {
        let acceptedAt = Fixture.now.adding(milliseconds: 5_000)
        let grace = Fixture.rules.cancellationGrace
        var (free, id) = try acceptedOrder(at: acceptedAt)
        let inGrace = try free.run(.cancel(reason: "found it myself"), on: id, by: Fixture.publisher,
                                   at: acceptedAt.adding(milliseconds: grace - 1))
        #expect(inGrace.after.cancellation?.fee == 0)
        #expect(inGrace.after.cancellation?.runner == Fixture.runner)
        #expect(inGrace.event.notify.contains(Fixture.runner))

        var (paid, same) = try acceptedOrder(at: acceptedAt)
        let late = try paid.run(.cancel(reason: "found it myself"), on: same, by: Fixture.publisher,
                                at: acceptedAt.adding(milliseconds: grace))
        #expect(late.after.cancellation?.fee == Fixture.rules.cancellationFee)
        #expect(late.after.cancellation?.reason == "found it myself")
        #expect(paid.shard.earnings(of: Fixture.runner).cancellationFees == Fixture.rules.cancellationFee)
        #expect(paid.shard.orders(of: Fixture.runner, role: .accepted, scope: .history).map(\.id) == [same])
    }

    @Test func cancellingATakenOrderNeedsAReason() throws {
        var (driver, id) = try acceptedOrder(at: Fixture.now)
        for reason in [nil, "   "] as [String?] {
            let error = domainError { () throws(DomainError) in
                try driver.run(.cancel(reason: reason), on: id, by: Fixture.publisher)
            }
            #expect(error?.field == "reason")
        }
        let open = try driver.publish(Fixture.express())
        let applied = try driver.run(.cancel(reason: nil), on: open, by: Fixture.publisher)
        #expect(applied.after.cancellation == Cancellation(cause: .publisher, reason: nil, fee: 0, runner: nil))
    }

    @Test func deliveryCodeIsRequiredAndCompletesTheOrder() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express(code: true))
        let code = try #require(driver.shard.order(id)?.deliveryCode)
        #expect(code.count == 4 && code.allSatisfy(\.isNumber))
        #expect(try driver.shard.detail(id, viewer: Fixture.publisher).deliveryCode == code)
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        try driver.run(.pickUp, on: id, by: Fixture.runner)
        #expect(try driver.shard.detail(id, viewer: Fixture.runner).deliveryCode == nil)
        let missing = domainError { () throws(DomainError) in
            try driver.run(.deliver(code: nil), on: id, by: Fixture.runner)
        }
        #expect(missing?.field == "code")
        let wrongCode = code == "0000" ? "0001" : "0000"
        let wrong = domainError { () throws(DomainError) in
            try driver.run(.deliver(code: wrongCode), on: id, by: Fixture.runner)
        }
        #expect(wrong?.code == .wrongDeliveryCode)
        let done = try driver.run(.deliver(code: code), on: id, by: Fixture.runner)
        #expect(done.after.status == .completed)
        #expect(done.after.timeline.suffix(2).map(\.status) == [.delivered, .completed])
        #expect(driver.shard.nextDueTime == nil)
    }

    @Test func deliveryCodeDependsOnlyOnTheRandomSource() throws {
        var first = ShardDriver()
        var second = ShardDriver()
        try first.publish(Fixture.express(code: true))
        try second.publish(Fixture.express(code: true))
        #expect(first.shard == second.shard)
        #expect(try first.shard.detail(OrderID(shard: 0, serial: 1), viewer: nil).deliveryCode == nil)
    }

    func completedOrder() throws -> (ShardDriver, OrderID) {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express(tip: 450))
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
        try driver.run(.pickUp, on: id, by: Fixture.runner)
        try driver.run(.deliver(code: nil), on: id, by: Fixture.runner)
        try driver.run(.confirm, on: id, by: Fixture.publisher)
        return (driver, id)
    }

    @Test func eachSideRatesTheOtherOnceAfterCompletion() throws {
        var (driver, id) = try completedOrder()
        try driver.run(.rate(stars: 5, comment: "fast"), on: id, by: Fixture.publisher)
        let again = domainError { () throws(DomainError) in
            try driver.run(.rate(stars: 1, comment: ""), on: id, by: Fixture.publisher)
        }
        #expect(again?.code == .alreadyRated)
        try driver.run(.rate(stars: 4, comment: ""), on: id, by: Fixture.runner)
        let order = try #require(driver.shard.order(id))
        #expect(order.ratingByPublisher?.stars == 5)
        #expect(order.ratingByRunner?.stars == 4)
        let stranger = domainError { () throws(DomainError) in
            try driver.run(.rate(stars: 3, comment: ""), on: id, by: Fixture.stranger)
        }
        #expect(stranger?.code == .notYourOrder)
        let earnings = driver.shard.earnings(of: Fixture.runner)
        #expect(earnings.completedCount == 1 && earnings.tips == 450 && earnings.ratingStars == 5)
    }

    @Test func ratingIsCheckedAndOnlyAfterCompletion() throws {
        var driver = ShardDriver()
        let open = try driver.publish(Fixture.express())
        let early = domainError { () throws(DomainError) in
            try driver.run(.rate(stars: 5, comment: ""), on: open, by: Fixture.publisher)
        }
        #expect(early?.code == .invalidTransition)
        var (done, id) = try completedOrder()
        for (stars, comment, field) in [(0, "", "stars"), (6, "", "stars"),
                                        (3, String(repeating: "好", count: 201), "comment")] {
            let error = domainError { () throws(DomainError) in
                try done.run(.rate(stars: stars, comment: comment), on: id, by: Fixture.runner)
            }
            #expect(error?.field == field)
        }
        try done.run(.rate(stars: 1, comment: String(repeating: "好", count: 200)), on: id, by: Fixture.runner)
    }
}
