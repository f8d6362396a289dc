import Testing
@testable import BangbangCore

@Suite struct ListingTests {
    /// Three shards of the express board with 30 orders of varied time, tip, campus and text.
    static func board() throws -> [ShardDriver] {
        var shards = (0..<3).map { ShardDriver(index: $0) }
        for n in 0..<30 {
            var draft = Fixture.express(deadline: Fixture.now.adding(milliseconds: Fixture.hour + Int64((n * 7) % 11) * 1_000),
                                        tip: Cents((n * 37) % 13) * 100, campus: n % 3 == 0 ? "south" : "north")
            if n % 4 == 0, case .express(var details) = draft.details {
                details.pickupStation = "Cainiao \(n) Parcel Locker"
                draft.details = .express(details)
            }
            try shards[n % 3].publish(draft, at: Fixture.now.adding(milliseconds: Int64(n / 2)))
        }
        return shards
    }

    static func allOpen(_ shards: [ShardDriver]) -> [Order] {
        shards.flatMap { $0.shard.orders.values.filter(\.isListed) }
    }

    func page(_ shards: [ShardDriver], _ query: OrderListQuery) -> OrderListPage {
        OrderListPage.merge(shards.map { $0.shard.listOpen(query) }, query: query)
    }

    func expected(_ shards: [ShardDriver], _ sort: OrderSort, _ filter: FeedFilter = FeedFilter()) -> [OrderID] {
        Self.allOpen(shards).filter(filter.matches)
            .sorted { sort.precedes((sort.key($0), $0.id), (sort.key($1), $1.id)) }.map(\.id)
    }

    @Test func everySortMatchesABruteForceOrdering() throws {
        let shards = try Self.board()
        for sort in OrderSort.allCases {
            let result = page(shards, OrderListQuery(sort: sort, limit: 100))
            #expect(result.items.map(\.id) == expected(shards, sort), "\(sort)")
            #expect(result.total == 30)
            #expect(result.nextCursor == nil)
        }
        let byTip = page(shards, OrderListQuery(sort: .tip, limit: 100)).items.map(\.tip)
        #expect(byTip == byTip.sorted(by: >))
        let byDeadline = page(shards, OrderListQuery(sort: .deadline, limit: 100)).items.map(\.deadline)
        #expect(byDeadline == byDeadline.sorted())
    }

    @Test func cursorPagingWalksTheWholeListWithoutGapsOrRepeats() throws {
        let shards = try Self.board()
        for sort in OrderSort.allCases {
            var seen: [OrderID] = []
            var cursor: ListCursor?
            var pages = 0
            repeat {
                let result = page(shards, OrderListQuery(sort: sort, limit: 7, after: cursor))
                #expect(result.items.count <= 7)
                seen += result.items.map(\.id)
                cursor = result.nextCursor.flatMap { ListCursor(token: $0.token) }
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 5)
            #expect(seen == expected(shards, sort), "\(sort)")
        }
    }

    @Test func cursorPagingOverOneShardKnowsWhenMoreFollow() throws {
        var driver = ShardDriver()
        for n in 0..<10 { try driver.publish(Fixture.express(), at: Fixture.now.adding(milliseconds: Int64(n))) }
        let query = OrderListQuery(limit: 5)
        let first = OrderListPage.merge([driver.shard.listOpen(query)], query: query)
        let cursor = try #require(first.nextCursor)
        let next = OrderListQuery(limit: 5, after: cursor)
        let second = OrderListPage.merge([driver.shard.listOpen(next)], query: next)
        #expect(second.items.count == 5)
        #expect(second.nextCursor == nil)
        #expect(Set(first.items.map(\.id)).isDisjoint(with: second.items.map(\.id)))
    }

    @Test func offsetPagingMatchesSlicesOfTheFullList() throws {
        let shards = try Self.board()
        let full = expected(shards, .newest)
        for offset in [0, 5, 28, 30, 31] {
            let result = page(shards, OrderListQuery(sort: .newest, limit: 5, offset: offset))
            #expect(result.items.map(\.id) == Array(full.dropFirst(offset).prefix(5)), "offset \(offset)")
        }
    }

    @Test func filtersNarrowTheList() throws {
        var shards = try Self.board()
        let filters = [FeedFilter(campus: "south"), FeedFilter(minimumTip: 800), FeedFilter(keyword: "PARCEL locker"),
                       FeedFilter(types: [.bounty]), FeedFilter(types: [.express], campus: "north", minimumTip: 500)]
        for filter in filters {
            let result = page(shards, OrderListQuery(filter: filter, sort: .tip, limit: 100))
            let wanted = expected(shards, .tip, filter)
            #expect(result.items.map(\.id) == wanted)
            #expect(result.total == wanted.count)
        }
        #expect(page(shards, OrderListQuery(filter: FeedFilter(keyword: "parcel locker"))).total == 8)
        #expect(page(shards, OrderListQuery(filter: FeedFilter(types: [.bounty]))).total == 0)
        // Taken orders leave the board.
        let first = try #require(page(shards, OrderListQuery()).items.first?.id)
        try shards[first.shard].run(.accept(isVerifiedRunner: true), on: first, by: Fixture.runner)
        #expect(page(shards, OrderListQuery(limit: 100)).items.map(\.id).contains(first) == false)
        #expect(page(shards, OrderListQuery()).total == 29)
    }

    @Test func listingsShowNoPrivateFields() throws {
        let shards = try Self.board()
        for item in page(shards, OrderListQuery(limit: 100)).items {
            guard case .express(let details) = item.details else { Issue.record("not express"); continue }
            #expect(details.pickupCode == nil && details.dropOffRoom == nil && details.contactPhone == nil)
        }
    }

    @Test func limitIsClampedAndCursorTokensRejectGarbage() {
        #expect(OrderListQuery(limit: 0).limit == 1)
        #expect(OrderListQuery(limit: 1_000).limit == 100)
        #expect(OrderListQuery(offset: -3).offset == 0)
        #expect(ListCursor(token: "12:34") == ListCursor(key: 12, id: OrderID(rawValue: 34)))
        for bad in ["", "12", "a:1", "1:b", "1:2:3", "1:-2"] { #expect(ListCursor(token: bad) == nil, "\(bad)") }
    }

    @Test func myOrdersSplitActiveAndHistory() throws {
        var driver = ShardDriver()
        let open = try driver.publish(Fixture.express(), at: Fixture.now)
        let taken = try driver.publish(Fixture.bounty(), at: Fixture.now.adding(milliseconds: 1))
        let gone = try driver.publish(Fixture.express(), at: Fixture.now.adding(milliseconds: 2))
        try driver.run(.accept(isVerifiedRunner: true), on: taken, by: Fixture.runner, at: Fixture.now.adding(milliseconds: 3))
        try driver.run(.cancel(reason: nil), on: gone, by: Fixture.publisher, at: Fixture.now.adding(milliseconds: 3))
        let mine = driver.shard.orders(of: Fixture.publisher, role: .published, scope: .all).map(\.id)
        #expect(mine == [gone, taken, open])
        #expect(driver.shard.orders(of: Fixture.publisher, role: .published, scope: .active).map(\.id) == [taken, open])
        #expect(driver.shard.orders(of: Fixture.publisher, role: .published, scope: .history).map(\.id) == [gone])
        #expect(driver.shard.orders(of: Fixture.runner, role: .accepted, scope: .active).map(\.id) == [taken])
        #expect(driver.shard.orders(of: Fixture.runner, role: .published, scope: .all).isEmpty)
        #expect(driver.shard.earnings(of: Fixture.runner).activeCount == 1)
    }

    @Test func myOrdersMergeAcrossShardsNewestFirst() throws {
        var shards = [ShardDriver(index: 0), ShardDriver(index: 8)]
        var ids: [OrderID] = []
        for n in 0..<6 {
            ids.append(try shards[n % 2].publish(Fixture.express(), at: Fixture.now.adding(milliseconds: Int64(n))))
        }
        let all = MyOrdersPage.merge(shards.map { $0.shard.orders(of: Fixture.publisher, role: .published, scope: .all) },
                                     limit: 100)
        #expect(all.items.map(\.id) == ids.reversed())
        #expect(all.nextCursor == nil)
        let first = MyOrdersPage.merge(shards.map {
            $0.shard.orders(of: Fixture.publisher, role: .published, scope: .all, limit: 3)
        }, limit: 2)
        #expect(first.items.map(\.id) == [ids[5], ids[4]])
        #expect(first.nextCursor == ListCursor(key: Fixture.now.milliseconds + 4, id: ids[4]))
    }

    /// The page of `limit` after `cursor` through the publisher's orders, the way the server asks.
    private func myPage(_ shards: [ShardDriver], limit: Int, after cursor: ListCursor?) -> MyOrdersPage {
        MyOrdersPage.merge(shards.map {
            $0.shard.orders(of: Fixture.publisher, role: .published, scope: .all, after: cursor, limit: limit + 1)
        }, limit: limit)
    }

    /// Every page of `limit`, following the cursors to the end.
    private func myPages(_ shards: [ShardDriver], limit: Int) -> [[OrderID]] {
        var pages: [[OrderID]] = []
        var cursor: ListCursor?
        repeat {
            let page = myPage(shards, limit: limit, after: cursor)
            pages.append(page.items.map(\.id))
            cursor = page.nextCursor
        } while cursor != nil
        return pages
    }

    @Test func myOrdersPagesCoverEveryOrderOnceAndTheLastHasNoCursor() throws {
        var shards = [ShardDriver(index: 0), ShardDriver(index: 1), ShardDriver(index: 2)]
        var ids: [OrderID] = []
        // Several orders share a millisecond: the id breaks the tie, so none is lost at a page edge.
        for n in 0..<11 {
            ids.append(try shards[n % 3].publish(Fixture.express(), at: Fixture.now.adding(milliseconds: Int64(n / 3))))
        }
        let expected = MyOrdersPage.merge(shards.map { $0.shard.orders(of: Fixture.publisher, role: .published, scope: .all) },
                                          limit: 100).items.map(\.id)
        #expect(Set(expected) == Set(ids))
        for limit in 1...12 {
            let pages = myPages(shards, limit: limit)
            #expect(pages.flatMap { $0 } == expected, "limit \(limit)")
            #expect(pages.dropLast().allSatisfy { $0.count == limit })
        }
        #expect(myPages(shards, limit: 11).count == 1, "an exact fit is one page, without a cursor")
        #expect(myPages([ShardDriver(index: 0)], limit: 5) == [[]])
    }

    @Test func myOrdersPagingIsStableWhenOrdersArriveBetweenPages() throws {
        var shards = [ShardDriver(index: 0), ShardDriver(index: 1)]
        var old: [OrderID] = []
        for n in 0..<6 {
            old.append(try shards[n % 2].publish(Fixture.express(), at: Fixture.now.adding(milliseconds: Int64(n))))
        }
        var pages: [[OrderID]] = []
        var cursor: ListCursor?
        repeat {
            let page = myPage(shards, limit: 2, after: cursor)
            pages.append(page.items.map(\.id))
            cursor = page.nextCursor
            // A new order between pages, on either shard: newer than everything listed so far.
            let arrival = pages.count
            try shards[arrival % 2].publish(Fixture.express(), at: Fixture.now.adding(milliseconds: 100 + Int64(arrival)))
        } while cursor != nil
        #expect(pages.flatMap { $0 } == old.reversed(), "new orders go on top, never into later pages")
    }

    @Test func moneyIsShownInYuan() {
        #expect(OrderDraft.yuan(0) == "¥0.00")
        #expect(OrderDraft.yuan(1_205) == "¥12.05")
        #expect(OrderDraft.yuan(50_000) == "¥500.00")
        #expect(OrderDraft.yuan(-7) == "-¥0.07")
    }

    @Test func layoutMapsShardsToTypes() {
        let layout = BoardLayout(shardsPerType: 4)
        #expect(layout.shardCount == 16)
        #expect(layout.shards(of: .express) == 0..<4)
        #expect(layout.shards(of: .group) == 12..<16)
        for type in OrderType.allCases {
            for index in layout.shards(of: type) { #expect(layout.type(ofShard: index) == type) }
        }
    }
}
