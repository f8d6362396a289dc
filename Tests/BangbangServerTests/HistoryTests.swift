// History: pages, lookups and earnings answered from live shards and the order archive
// together must read exactly as if every order were still on its shard: no order skipped or
// repeated across the live/archive boundary, the newer copy of an order in both, totals that
// count each order once.
import Foundation
import OrderArchive
import Testing
@testable import BangbangCore
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

private enum Sample {
    static let now = Timestamp(milliseconds: 1_767_225_600_000)
    static let publisher = UserID(1)
    static let runner = UserID(2)
    static let stranger = UserID(3)
    static let shardIndex = 4

    static func draft(tip: Cents) -> OrderDraft {
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: 86_400_000), tip: tip,
                   details: .express(ExpressDetails(pickupStation: "Station 3", pickupCode: "8-2-1043", parcelSize: .small,
                                                    dropOffPlace: "Dorm 7", dropOffRoom: "512", contactPhone: "+8613812345678")))
    }

    static func group() -> OrderDraft {
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: 2 * 86_400_000), tip: 0,
                   details: .group(GroupDetails(kind: .carpool, subject: "To the airport", closesAt: now.adding(milliseconds: 86_400_000),
                                                capacity: 4, minimumFill: 2, pricePerShare: 3_000)))
    }

    /// The events of `count` orders published one second apart (two at a time share a second,
    /// so ties are broken by id), each completed by `runner` and rated, except that every
    /// fourth is cancelled late (a fee) and the last two stay open.
    static func history(count: Int) throws -> [[OrderEvent]] {
        var shard = BoardShard(index: shardIndex)
        var random = SystemRandomNumberGenerator()
        var orders: [[OrderEvent]] = []
        for number in 0..<count {
            let at = now.adding(milliseconds: Int64(number / 2) * 1_000)
            let publish = try shard.decidePublish(draft(tip: Cents(100 + number)), by: publisher, now: at,
                                                  rules: OrderRules(), using: &random)
            shard.apply(publish)
            var events = [publish]
            let id = publish.orderID
            if number < count - 2 {
                var changes: [OrderChange] = [.accepted(runner: runner)]
                if number % 4 == 3 {
                    changes.append(.cancelled(Cancellation(cause: .publisher, reason: nil, fee: 50, runner: runner)))
                } else {
                    changes += [.progressed(to: .pickedUp), .delivered(autoConfirmAt: nil),
                                .rated(byPublisher: true, Rating(stars: 1 + number % 5, comment: "", at: at))]
                }
                for change in changes {
                    events.append(OrderEvent(orderID: id, at: at.adding(milliseconds: 500), actor: runner, change: change,
                                             notify: [publisher, runner]))
                }
            }
            orders.append(events)
        }
        return orders
    }

    static func shard(holding orders: some Sequence<[OrderEvent]>) -> BoardShard {
        var shard = BoardShard(index: shardIndex)
        for events in orders { for event in events { shard.apply(event) } }
        return shard
    }
}

private func temporaryArchive() throws -> (OrderArchive, String) {
    let directory = NSTemporaryDirectory() + "history-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return (try OrderArchive(path: directory + "/archive.sqlite"), directory)
}

/// Every page of `orders.mine` from `live` and `archive`, following the cursor to the end.
private func allPages(live: BoardShard, archive: OrderArchive, user: UserID, role: OrderRole, scope: OrderScope,
                      limit: Int) throws -> [[OrderView]] {
    var pages: [[OrderView]] = []
    var cursor: ListCursor?
    repeat {
        let liveParts = [live.orders(of: user, role: role, scope: scope, after: cursor, limit: limit + 1)]
        let archived = try archive.orders(of: History.archiveID(user), as: History.archiveRole(role),
                                          before: History.archiveCursor(cursor), limit: limit + 1)
        let page = try History.page(live: liveParts, archived: archived, viewer: user, scope: scope, limit: limit)
        pages.append(page.items)
        cursor = page.nextCursor
        #expect(pages.count < 100, "the cursor never ends")
    } while cursor != nil && pages.count < 100
    return pages
}

@Suite struct HistoryTests {
    @Test(arguments: [1, 3, 7, 50])
    func pagesAcrossLiveAndArchiveListEveryOrderOnceInBoardOrder(limit: Int) throws {
        let orders = try Sample.history(count: 22)
        let everything = Sample.shard(holding: orders)
        // Orders 0–13 were archived; 10–21 are still live (10–13 in both, in their rating window).
        let archivedOrders = orders[0..<14].map { everything.order($0[0].orderID)! }
        let live = Sample.shard(holding: orders[10...])
        let (archive, directory) = try temporaryArchive()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try archive.archive(archivedOrders.map { ArchivedOrder($0) }, throughSequence: 1)

        for role in [OrderRole.published, .accepted] {
            for scope in OrderScope.allCases {
                let user = role == .published ? Sample.publisher : Sample.runner
                let pages = try allPages(live: live, archive: archive, user: user, role: role, scope: scope, limit: limit)
                let expected = everything.orders(of: user, role: role, scope: scope)
                #expect(pages.flatMap { $0 } == expected, "role \(role), scope \(scope), limit \(limit)")
                #expect(pages.dropLast().allSatisfy { $0.count == limit })
                if !expected.isEmpty { #expect(!pages.last!.isEmpty) }
            }
        }
        #expect(everything.orders(of: Sample.publisher, role: .published, scope: .history).count == 20)
    }

    @Test func theCopyWithTheHigherRevisionWinsAndTheLiveOneOnATie() throws {
        let orders = try Sample.history(count: 3)
        let id = orders[0][0].orderID
        // The archive took the order when it completed; the publisher's rating came later.
        let completed = Sample.shard(holding: [Array(orders[0].dropLast())]).order(id)!
        let live = Sample.shard(holding: [orders[0]])
        var edited = live.order(id)!
        edited.ratingByPublisher?.comment = "edited by support"
        let (archive, directory) = try temporaryArchive()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        try archive.archive([ArchivedOrder(completed)], throughSequence: 1)
        var page = try History.page(live: [live.orders(of: Sample.publisher, role: .published, scope: .all)],
                                    archived: try archive.orders(of: "1", as: .publisher, limit: 10),
                                    viewer: Sample.publisher, scope: .all, limit: 10)
        #expect(page.items.count == 1)
        #expect(page.items[0].ratingByPublisher?.stars == live.order(id)!.ratingByPublisher?.stars)
        #expect(page.items[0].revision == live.order(id)!.revision)

        // Same revision: the live copy.
        try archive.archive([ArchivedOrder(edited)], throughSequence: 2)
        page = try History.page(live: [live.orders(of: Sample.publisher, role: .published, scope: .all)],
                                archived: try archive.orders(of: "1", as: .publisher, limit: 10),
                                viewer: Sample.publisher, scope: .all, limit: 10)
        #expect(page.items.map(\.ratingByPublisher?.comment) == [""])

        // A newer revision in the archive wins over the live copy.
        edited.revision += 1
        try archive.archive([ArchivedOrder(edited)], throughSequence: 3)
        page = try History.page(live: [live.orders(of: Sample.publisher, role: .published, scope: .all)],
                                archived: try archive.orders(of: "1", as: .publisher, limit: 10),
                                viewer: Sample.publisher, scope: .all, limit: 10)
        #expect(page.items.map(\.ratingByPublisher?.comment) == ["edited by support"])
        #expect(page.nextCursor == nil)
    }

    @Test func joinedGroupOrdersPageFromTheArchiveToo() throws {
        var shard = BoardShard(index: Sample.shardIndex)
        var random = SystemRandomNumberGenerator()
        var ids: [OrderID] = []
        for number in 0..<5 {
            let at = Sample.now.adding(milliseconds: Int64(number) * 1_000)
            let publish = try shard.decidePublish(Sample.group(), by: Sample.publisher, now: at, rules: OrderRules(), using: &random)
            shard.apply(publish)
            for user in [Sample.runner, Sample.stranger] where number != 2 || user == Sample.stranger {
                shard.apply(OrderEvent(orderID: publish.orderID, at: at, actor: user, change: .joined(user), notify: []))
            }
            shard.apply(OrderEvent(orderID: publish.orderID, at: at, actor: nil, change: .closedForJoining, notify: []))
            shard.apply(OrderEvent(orderID: publish.orderID, at: at, actor: nil, change: .groupCompleted(automatic: true), notify: []))
            ids.append(publish.orderID)
        }
        let (archive, directory) = try temporaryArchive()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try archive.archive(ids.map { ArchivedOrder(shard.order($0)!) }, throughSequence: 1)
        let pages = try allPages(live: BoardShard(index: Sample.shardIndex), archive: archive, user: Sample.runner,
                                 role: .joined, scope: .history, limit: 2)
        #expect(pages.flatMap { $0 }.map(\.id) == [ids[4], ids[3], ids[1], ids[0]])
        #expect(pages.flatMap { $0 } == shard.orders(of: Sample.runner, role: .joined, scope: .history))
    }

    @Test func anArchivedOrderIsShownWithTheSameViewerRulesAsALiveOne() throws {
        let orders = try Sample.history(count: 3)
        let shard = Sample.shard(holding: orders)
        let order = shard.order(orders[0][0].orderID)!
        let record = ArchivedOrder(order)
        #expect(record.id == String(order.id.rawValue))
        #expect(record.publisher == "1" && record.runner == "2" && record.status == "completed")
        #expect(record.runnerEarning == Int(order.tip))
        #expect(try Order(archived: record) == order)
        for viewer in [Sample.publisher, Sample.runner, Sample.stranger] {
            let view = try History.view(of: record, viewer: { _ in viewer })
            #expect(view == OrderView(order, viewer: viewer))
        }
        let stranger = try History.view(of: record, viewer: { _ in Sample.stranger })
        #expect(stranger.details == order.details.redacted)
        #expect(try History.view(of: record, viewer: { $0.publisher }) == OrderView(order, viewer: Sample.publisher))
    }

    @Test func aMissingOrUnreadableArchivedOrderIsAnErrorNotAnEmptyOrder() throws {
        let missing = domainError { () throws(DomainError) in try History.view(of: nil, viewer: { _ in nil }) }
        #expect(missing?.code == .notFound)
        let order = Sample.shard(holding: try Sample.history(count: 1)).orders.values.first!
        var corrupt = ArchivedOrder(order)
        corrupt.encoded = Array(corrupt.encoded.prefix(corrupt.encoded.count / 2))
        let unreadable = domainError { () throws(DomainError) in try History.view(of: corrupt, viewer: { _ in nil }) }
        #expect(unreadable?.code == .internalError)
        var other = ArchivedOrder(order)
        other.id = "999"
        let mismatched = domainError { () throws(DomainError) in try History.view(of: other, viewer: { _ in nil }) }
        #expect(mismatched?.code == .internalError)
        let page = domainError { () throws(DomainError) in
            try History.page(live: [], archived: [corrupt], viewer: Sample.publisher, scope: .all, limit: 5)
        }
        #expect(page?.code == .internalError)
    }

    @Test func earningsCountEveryOrderOnceWhetherLiveArchivedOrBoth() throws {
        let orders = try Sample.history(count: 22)
        let everything = Sample.shard(holding: orders)
        let live = Sample.shard(holding: orders[10...])
        let (archive, directory) = try temporaryArchive()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try archive.archive(orders[0..<14].map { ArchivedOrder(everything.order($0[0].orderID)!) }, throughSequence: 1)

        let excluded = Set(live.closedOrderIDs(ranBy: Sample.runner).map(History.archiveID))
        #expect(excluded.count == 10)
        let totals = try archive.runnerTotals(of: History.archiveID(Sample.runner), excluding: excluded)
        let merged = History.earnings(live: [live.earnings(of: Sample.runner)], archived: totals)
        let expected = everything.earnings(of: Sample.runner)
        #expect(merged == expected)
        #expect(expected.completedCount == 15 && expected.cancellationFees == 250 && expected.ratingCount == 15)
        // Without leaving the live copies out, the overlap would count twice.
        let doubled = History.earnings(live: [live.earnings(of: Sample.runner)],
                                       archived: try archive.runnerTotals(of: History.archiveID(Sample.runner)))
        #expect(doubled.completedCount > expected.completedCount)
    }
}

/// The error a throwing call produced, or nil if it succeeded.
private func domainError<T>(_ body: () throws(DomainError) -> T) -> DomainError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
