import Foundation
import OrderArchive
import Testing
@testable import BangbangCore
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

/// A measuring tool, not a test: run with
/// `HISTORY_BENCHMARK=1 swift test --filter HistoryBenchmark` (for real numbers a release build,
/// which `@testable` needs built for testing: `swift test -c release --build-path .build-rel
/// -Xswiftc -enable-testing --filter HistoryBenchmark`; `HISTORY_BENCHMARK_ORDERS` sets the
/// archive's size, 200,000 by default). It times the
/// archive's part of `order.get` of an archived order and of an `orders.mine` page (reader
/// connection, query, decoding, the viewer's view), without the network; it asserts only that
/// every lookup and page found what was archived.
@Suite struct HistoryBenchmark {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HISTORY_BENCHMARK"] != nil))
    func measureArchivedLookupsAndPages() throws {
        let count = Int(ProcessInfo.processInfo.environment["HISTORY_BENCHMARK_ORDERS"] ?? "") ?? 200_000
        let users = max(1, count / 200)
        let directory = NSTemporaryDirectory() + "history-benchmark-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let archive = try OrderArchive(path: directory + "/archive.sqlite")

        var shard = BoardShard(index: 0)
        var random = SystemRandomNumberGenerator()
        let now = Timestamp(milliseconds: 1_767_225_600_000)
        let draft = OrderDraft(campus: "north", deadline: now.adding(milliseconds: 3_600_000), tip: 300,
                               details: .express(ExpressDetails(pickupStation: "Station 3", pickupCode: "8-2-1043",
                                                                parcelSize: .small, dropOffPlace: "Dorm 7", dropOffRoom: "512",
                                                                contactPhone: "+8613812345678")))
        let publish = try shard.decidePublish(draft, by: UserID(1), now: now, rules: OrderRules(), using: &random)
        shard.apply(publish)
        for change: OrderChange in [.accepted(runner: UserID(2)), .progressed(to: .pickedUp), .delivered(autoConfirmAt: nil)] {
            shard.apply(OrderEvent(orderID: publish.orderID, at: now, actor: UserID(2), change: change, notify: []))
        }
        let template = shard.order(publish.orderID)!
        let clock = ContinuousClock()
        let writing = try clock.measure {
            var batch: [ArchivedOrder] = []
            for number in 0..<count {
                var order = template
                order.id = OrderID(shard: number % 256, serial: UInt64(number / 256 + 1))
                order.publisher = UserID(UInt64(1_000 + number % users))
                order.runner = UserID(UInt64(1_000 + (number + 1) % users))
                order.createdAt = now.adding(milliseconds: Int64(number) * 1_000)
                batch.append(ArchivedOrder(order))
                if batch.count == 5_000 {
                    try archive.archive(batch, throughSequence: UInt64(number))
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try archive.archive(batch, throughSequence: UInt64(count))
        }

        let probes = 2_000
        var lookups: [Duration] = []
        var pages: [Duration] = []
        for probe in 0..<probes {
            let number = (probe &* 7_919) % count
            let id = OrderID(shard: number % 256, serial: UInt64(number / 256 + 1))
            let viewer = UserID(UInt64(1_000 + number % users))
            var view: OrderView?
            lookups.append(try clock.measure {
                view = try History.view(of: try archive.order(id: History.archiveID(id)), viewer: { _ in viewer })
            })
            #expect(view?.id == id)
            var page: MyOrdersPage?
            let cursor = probe % 2 == 0 ? nil : ListCursor(key: view!.createdAt.milliseconds, id: id)
            pages.append(try clock.measure {
                let rows = try archive.orders(of: History.archiveID(viewer), as: .publisher,
                                              before: History.archiveCursor(cursor), limit: 51)
                page = try History.page(live: [], archived: rows, viewer: viewer, scope: .all, limit: 50)
            })
            #expect(page?.items.isEmpty == false || cursor != nil)
        }
        func percentile(_ values: [Duration], _ p: Double) -> Duration {
            values.sorted()[min(values.count - 1, Int(Double(values.count) * p))]
        }
        print("history benchmark: \(count) archived orders of \(users) publishers written in \(writing); "
              + "order lookup p50 \(percentile(lookups, 0.5)) p99 \(percentile(lookups, 0.99)); "
              + "orders.mine page of 50 p50 \(percentile(pages, 0.5)) p99 \(percentile(pages, 0.99))")
    }
}
