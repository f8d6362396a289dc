// The history reads of a real `Application` once closed orders have left memory for the archive:
// `orders.mine` pages, the order lookup and a runner's earnings answer exactly as they did while
// every order was still on its shard.
import BangbangCore
import Foundation
import OrderArchive
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct HistoryReadsTests {
    static let day: Int64 = 86_400_000

    /// A completed order, rated by its publisher.
    func completedOrder(_ harness: ApplicationHarness, publisher: UserID, runner: UserID, tip: Cents) async throws -> OrderID {
        let id = try await harness.completedOrder(publisher: publisher, runner: runner, tip: tip)
        try await harness.run(.rate(stars: 4, comment: ""), on: id, by: publisher)
        return id
    }

    func waitUntilArchived(_ harness: ApplicationHarness, _ ids: [OrderID]) async throws {
        for id in ids {
            let revision = try #require(await harness.order(id)?.revision)
            try await harness.eventually("order \(id) is archived") { await harness.archivedRevision(id) == revision }
        }
    }

    func page(_ app: Application, of user: UserID, role: OrderRole = .published, scope: OrderScope = .all,
              after cursor: ListCursor?, limit: Int) async throws -> MyOrdersPage {
        try await withCheckedContinuation { continuation in
            app.myOrders(of: user, role: role, scope: scope, after: cursor, limit: limit) { continuation.resume(returning: $0) }
        }.get()
    }

    func view(_ app: Application, _ id: OrderID, viewer: UserID) async -> Result<OrderView, DomainError> {
        await withCheckedContinuation { continuation in
            app.orderView(id, on: app.shards[id.shard], viewer: { _ in viewer }) { continuation.resume(returning: $0) }
        }
    }

    func earnings(_ app: Application, of runner: UserID) async throws -> RunnerEarnings {
        try await withCheckedContinuation { continuation in
            app.runnerEarnings(of: runner) { continuation.resume(returning: $0) }
        }.get()
    }

    @Test func pagesLookupsAndEarningsReadTheSameAfterOrdersLeaveMemory() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000201")
        let runner = try await harness.logIn("+8613900000202")
        let stranger = try await harness.logIn("+8613900000203")
        var old: [OrderID] = []
        for number in 0..<5 {
            old.append(try await completedOrder(harness, publisher: publisher, runner: runner, tip: Cents(100 * (number + 1))))
            harness.clock.advance(milliseconds: 1_000)
        }
        try await waitUntilArchived(harness, old)
        let before = try await page(harness.app, of: publisher, after: nil, limit: 50)
        let oldViews = await old.asyncMap { await view(harness.app, $0, viewer: stranger) }
        let earningsBefore = try await earnings(harness.app, of: runner)

        harness.clock.advance(milliseconds: 8 * Self.day)
        #expect(try await harness.sweepArchive() == 5)
        for id in old { #expect(await harness.order(id) == nil) }
        // Recent ones: closed (archived, still in their rating window) and one still open.
        var recent: [OrderID] = []
        for _ in 0..<2 {
            recent.append(try await completedOrder(harness, publisher: publisher, runner: runner, tip: 50))
        }
        try await waitUntilArchived(harness, recent)
        recent.append(try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher))

        let all = try await page(harness.app, of: publisher, after: nil, limit: 50)
        #expect(all.items.map(\.id) == (old + recent).sorted(by: >))
        #expect(Array(all.items.suffix(5)) == before.items)
        var paged: [OrderID] = []
        var cursor: ListCursor?
        repeat {
            let next = try await page(harness.app, of: publisher, after: cursor, limit: 3)
            paged += next.items.map(\.id)
            cursor = next.nextCursor
        } while cursor != nil && paged.count <= 8
        #expect(paged == (old + recent).sorted(by: >))
        let history = try await page(harness.app, of: runner, role: .accepted, scope: .history, after: nil, limit: 50)
        #expect(history.items.map(\.id) == (old + recent.prefix(2)).sorted(by: >))
        #expect(try await page(harness.app, of: publisher, scope: .active, after: nil, limit: 50).items.map(\.id) == [recent[2]])

        for (id, earlier) in zip(old, oldViews) {
            let now = await view(harness.app, id, viewer: stranger)
            #expect(try now.get() == earlier.get())
            #expect(try now.get().details == (try earlier.get()).details, "a stranger sees the redacted details")
        }
        let publisherView = try await view(harness.app, old[0], viewer: publisher).get()
        #expect(publisherView.details != (try oldViews[0].get()).details, "the publisher sees more than a stranger")
        let missing = await view(harness.app, OrderID(shard: old[0].shard, serial: 9_999), viewer: publisher)
        #expect(missing.failure?.code == .notFound)

        let earningsAfter = try await earnings(harness.app, of: runner)
        var expected = earningsBefore
        expected.completedCount += 2
        expected.tips += 100
        expected.ratingCount += 2
        expected.ratingStars += 8
        #expect(earningsAfter == expected)
        #expect(earningsBefore.completedCount == 5 && earningsBefore.tips == 1_500 && earningsBefore.ratingStars == 20)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Array where Element: Sendable {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
