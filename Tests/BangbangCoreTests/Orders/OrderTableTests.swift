import Testing
@testable import BangbangCore

@Suite struct OrderTableTests {
    /// A snapshot's cut copies a shard while its owner goes on changing it: the copy must keep
    /// every order as it was, though the two share the boxes of the orders neither changed.
    @Test func aCopyKeepsTheOrdersAsTheyWereWhenTaken() throws {
        var driver = ShardDriver(index: 3)
        let taken = try driver.publish(Fixture.express())
        let untouched = try driver.publish(Fixture.bounty())
        let cut = driver.shard
        let before = try #require(cut.order(taken))

        try driver.run(.accept(isVerifiedRunner: true), on: taken, by: Fixture.runner)
        let added = try driver.publish(Fixture.express())

        #expect(cut.order(taken) == before)
        #expect(cut.order(taken)?.status == .open)
        #expect(driver.shard.order(taken)?.status == .accepted)
        #expect(cut.order(added) == nil)
        #expect(cut.orders.count == 2)
        #expect(driver.shard.orders.count == 3)
        #expect(cut.order(untouched) == driver.shard.order(untouched))
        #expect(cut != driver.shard)
    }

    @Test func aCopyKeepsAnOrderTheOriginalMovedToTheArchive() throws {
        var table = OrderTable()
        let id = OrderID(shard: 0, serial: 1)
        table[id] = try sampleOrder(id)
        let copy = table
        table[id] = nil
        #expect(table.isEmpty)
        #expect(copy[id] == (try sampleOrder(id)))
    }

    @Test func tablesAreEqualWhenTheirOrdersAre() throws {
        let first = OrderID(shard: 0, serial: 1), second = OrderID(shard: 0, serial: 2)
        var a = OrderTable(), b = OrderTable()
        a[first] = try sampleOrder(first)
        a[second] = try sampleOrder(second)
        // Separate copies of equal orders, stored in the other order.
        b[second] = try sampleOrder(second)
        b[first] = try sampleOrder(first)
        #expect(a == b)
        var changed = try sampleOrder(second)
        changed.tip += 1
        b[second] = changed
        #expect(a != b)
        b[second] = nil
        #expect(a != b)
    }

    @Test func ordersAreVisitedByAscendingID() throws {
        var table = OrderTable()
        let ids = [9, 2, 40, 7, 1].map { OrderID(shard: 0, serial: UInt64($0)) }
        for id in ids { table[id] = try sampleOrder(id) }
        var visited: [OrderID] = []
        table.forEachByID { visited.append($0.id) }
        #expect(visited == ids.sorted())
        #expect(Set(table.keys) == Set(ids))
        #expect(Set(table.values.map(\.id)) == Set(ids))
    }

    private func sampleOrder(_ id: OrderID) throws -> Order {
        var driver = ShardDriver(index: id.shard)
        let published = try driver.publish(Fixture.express())
        var order = try #require(driver.shard.order(published))
        order.id = id
        return order
    }
}

@Suite struct OrderStorageTests {
    private func sample() throws -> Order {
        var driver = ShardDriver(index: 1)
        let id = try driver.publish(Fixture.express(code: true))
        return try #require(driver.shard.order(id))
    }

    /// Orders share their fields until one is written; the other copy never sees the write.
    @Test func writingACopyLeavesTheOriginalAsItWas() throws {
        let original = try sample()
        var copy = original
        copy.status = .accepted
        copy.runner = Fixture.runner
        copy.timeline.append(TimelineEntry(status: .accepted, at: Fixture.now, actor: Fixture.runner))
        copy.tip += 5
        #expect(original.status == .open)
        #expect(original.runner == nil)
        #expect(original.timeline.count == 1)
        #expect(copy.timeline.count == 2)
        #expect(copy.tip == original.tip + 5)
        #expect(copy != original)
        var again = copy
        again.tip -= 5
        again.tip += 5
        #expect(again == copy)
        #expect(again.hashValue == copy.hashValue)
    }

    @Test func equalFieldsMakeEqualOrdersWhateverTheirStorage() throws {
        let a = try sample()
        let b = Order(id: a.id, publisher: a.publisher, campus: a.campus, createdAt: a.createdAt, deadline: a.deadline,
                      tip: a.tip, status: a.status, runner: a.runner, acceptedAt: a.acceptedAt,
                      autoConfirmAt: a.autoConfirmAt, deliveryCode: a.deliveryCode, details: a.details,
                      participants: a.participants, timeline: a.timeline, cancellation: a.cancellation,
                      ratingByPublisher: a.ratingByPublisher, ratingByRunner: a.ratingByRunner, revision: a.revision,
                      searchText: a.searchText)
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        var c = b
        c.searchText += " "
        #expect(a != c)
    }
}
