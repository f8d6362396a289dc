import Foundation
import Testing
import TestSupport
@testable import BangbangCore

@Suite struct ReplayTests {
    /// A history touching every kind of event and every order type.
    static func history() throws -> ShardDriver {
        var driver = ShardDriver(index: 9)
        let t = Fixture.now
        let express = try driver.publish(Fixture.express(code: true))
        let purchase = try driver.publish(Fixture.purchase())
        let bounty = try driver.publish(Fixture.bounty())
        let group = try driver.publish(Fixture.group(capacity: 2))
        let quorum = try driver.publish(Fixture.group(capacity: 4, minimumFill: 3))
        let lonely = try driver.publish(Fixture.express(deadline: t.adding(milliseconds: 10)))
        let code = try #require(driver.shard.order(express)?.deliveryCode)

        try driver.run(.raiseTip(to: 900), on: express, by: Fixture.publisher)
        try driver.run(.accept(isVerifiedRunner: true), on: express, by: Fixture.rival)
        try driver.run(.abandon, on: express, by: Fixture.rival)
        try driver.run(.accept(isVerifiedRunner: true), on: express, by: Fixture.runner)
        try driver.run(.pickUp, on: express, by: Fixture.runner)
        try driver.run(.deliver(code: code), on: express, by: Fixture.runner)
        try driver.run(.rate(stars: 5, comment: "快"), on: express, by: Fixture.publisher)
        try driver.run(.rate(stars: 4, comment: ""), on: express, by: Fixture.runner)

        try driver.run(.accept(isVerifiedRunner: true), on: purchase, by: Fixture.runner)
        try driver.run(.cancel(reason: "bought it myself"), on: purchase, by: Fixture.publisher,
                       at: t.adding(milliseconds: Fixture.hour / 2))

        try driver.run(.accept(isVerifiedRunner: true), on: bounty, by: Fixture.rival)
        try driver.run(.start, on: bounty, by: Fixture.rival)
        try driver.run(.deliver(code: nil), on: bounty, by: Fixture.rival)

        for user in [UserID(10), UserID(11)] { try driver.run(.join, on: group, by: user) }
        try driver.run(.leave, on: group, by: UserID(10))
        try driver.run(.join, on: group, by: UserID(12))
        try driver.run(.complete, on: group, by: Fixture.publisher)

        try driver.run(.join, on: quorum, by: UserID(10))
        driver.tick(t.adding(milliseconds: Fixture.rules.autoConfirmAfter))
        #expect(driver.status(lonely) == .expired)
        #expect(driver.status(quorum) == .cancelled)
        #expect(driver.status(bounty) == .completed)
        return driver
    }

    @Test func replayingTheJournalReproducesTheState() throws {
        let driver = try Self.history()
        var replayed = BoardShard(index: 9)
        for event in driver.journal { replayed.apply(event) }
        #expect(replayed == driver.shard)
        #expect(replayed.nextSerial == 7)
        #expect(replayed.earnings(of: Fixture.runner) == driver.shard.earnings(of: Fixture.runner))
    }

    @Test func eventsSurviveAJSONRoundTrip() throws {
        let driver = try Self.history()
        let data = try JSONEncoder().encode(driver.journal)
        let decoded = try JSONDecoder().decode([OrderEvent].self, from: data)
        #expect(decoded == driver.journal)
        var replayed = BoardShard(index: 9)
        for event in decoded { replayed.apply(event) }
        #expect(replayed == driver.shard)
    }

    @Test func snapshotSurvivesAJSONRoundTripWithIndexesRebuilt() throws {
        let driver = try Self.history()
        let data = try JSONEncoder().encode(driver.shard)
        let decoded = try JSONDecoder().decode(BoardShard.self, from: data)
        #expect(decoded == driver.shard)
        #expect(decoded.orders(of: Fixture.runner, role: .accepted, scope: .all).count == 2)
        // Continuing after a snapshot allocates the next serial, not a reused one.
        var random = SeededGenerator(seed: 1)
        let next = try decoded.decidePublish(Fixture.bounty(), by: Fixture.publisher, now: Fixture.now,
                                               rules: Fixture.rules, using: &random)
        #expect(next.orderID == OrderID(shard: 9, serial: 7))
    }

    @Test func snapshotWithAForeignOrderIsRejected() throws {
        let driver = try Self.history()
        var json = try #require(String(data: try JSONEncoder().encode(driver.shard), encoding: .utf8))
        json = json.replacingOccurrences(of: "\"index\":9", with: "\"index\":8")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(BoardShard.self, from: Data(json.utf8)) }
    }

    @Test func commandsViewsAndPagesRoundTrip() throws {
        let commands: [OrderCommand] = [.accept(isVerifiedRunner: true), .pickUp, .start, .deliver(code: "0042"),
                                        .confirm, .abandon, .cancel(reason: nil), .raiseTip(to: 5), .join, .leave,
                                        .complete, .rate(stars: 3, comment: "ok")]
        #expect(try JSONDecoder().decode([OrderCommand].self, from: JSONEncoder().encode(commands)) == commands)
        let driver = try Self.history()
        let query = OrderListQuery(filter: FeedFilter(types: [.express], keyword: "Dorm"), sort: .tip, limit: 3)
        #expect(try JSONDecoder().decode(OrderListQuery.self, from: JSONEncoder().encode(query)) == query)
        let views = driver.shard.orders(of: Fixture.publisher, role: .published, scope: .all)
        #expect(try JSONDecoder().decode([OrderView].self, from: JSONEncoder().encode(views)) == views)
    }

    @Test func decodingFiltersAndQueriesGoesThroughTheirInitialisers() throws {
        let filter = try JSONDecoder().decode(FeedFilter.self, from: Data(#"{"types":["bounty"],"keyword":"UMBRELLA"}"#.utf8))
        #expect(filter == FeedFilter(types: [.bounty], keyword: "umbrella"))
        var driver = ShardDriver()
        let published = try driver.publishing(Fixture.bounty())
        #expect(filter.matches(published.after))
        let query = try JSONDecoder().decode(OrderListQuery.self, from: Data(#"{"limit":5000,"offset":-1}"#.utf8))
        #expect(query.limit == 100 && query.offset == 0 && query.sort == .newest)
        let item = try JSONDecoder().decode(PurchaseItem.self, from: Data(#"{"name":"Tea","qty":3}"#.utf8))
        #expect(item == PurchaseItem(name: "Tea", quantity: 3))
    }

    @Test func statusAndErrorWireNamesAreSnakeCase() {
        #expect(OrderStatus.pickedUp.rawValue == "picked_up")
        #expect(OrderStatus.inProgress.rawValue == "in_progress")
        #expect(GroupKind.groupBuy.rawValue == "group_buy")
        let codes: [ErrorCode] = [.orderTaken, .orderClosed, .runnerNotVerified, .notYourOrder, .invalidTransition,
                                  .wrongDeliveryCode, .groupFull, .alreadyJoined, .notJoined, .alreadyRated]
        for code in codes {
            #expect(code.rawValue.allSatisfy { $0 == "_" || ($0.isLowercase && $0.isASCII) }, "\(code)")
        }
        #expect(Set(codes).count == codes.count)
    }
}
