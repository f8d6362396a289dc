// A data directory written before the archive existed (Fixtures/before-archive: bangbang 0.1.0,
// every closed order in its snapshot and journal, no archive file) starts, archives its closed
// orders, and once their rating window has passed moves them out of memory, keeping the live
// ones and the boards' numbering.
import BangbangCore
import Foundation
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct ArchiveMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/before-archive").path

    @Test func aDirectoryFromBeforeTheArchiveMovesItsHistoryThere() async throws {
        let harness = try ApplicationHarness(shardsPerType: 4)
        let data = harness.configuration.dataDirectory
        try harness.restart {
            let files = FileManager.default
            for name in try files.contentsOfDirectory(atPath: data) { try files.removeItem(atPath: data + "/" + name) }
            for name in try files.contentsOfDirectory(atPath: Self.fixture) where name != "README.md" {
                try files.copyItem(atPath: Self.fixture + "/" + name, toPath: data + "/" + name)
            }
        }
        let orders = await harness.shardStates().flatMap { $0.orders.values }
        let closed = orders.filter(\.status.isTerminal)
        let live = Set(orders.filter { !$0.status.isTerminal }.map(\.id))
        #expect(closed.count > 20, "the fixture holds \(closed.count) closed orders")
        #expect(harness.logged("recovered").first?.contains("records=51") == true)

        for order in closed {
            try await harness.eventually("order \(order.id) is archived") {
                await harness.archivedRevision(order.id) == order.revision
            }
            let record = try #require(try harness.app.archive.order(id: String(order.id.rawValue)))
            #expect(try StoredOrder.decode(record.encoded) == order)
            #expect(record.status == order.status.rawValue && record.closedAt == order.closedAt?.milliseconds)
        }
        #expect(try harness.app.archive.watermark() == 202)

        let latest = try #require(closed.compactMap(\.closedAt).max())
        harness.clock.advance(milliseconds: latest.milliseconds - harness.clock.now.milliseconds + 8 * 86_400_000)
        let boards = OrderType.allCases.map { harness.app.boardSequence(of: $0) }
        var moved = 0
        while true {
            let swept = try await harness.sweepArchive()
            if swept == 0 { break }
            moved += swept
        }
        #expect(moved == closed.count)
        #expect(Set(await harness.shardStates().flatMap { $0.orders.keys }) == live)

        try harness.restart()
        #expect(Set(await harness.shardStates().flatMap { $0.orders.keys }) == live)
        #expect(OrderType.allCases.map { harness.app.boardSequence(of: $0) } == boards)
        for order in closed { #expect(try harness.app.archive.order(id: String(order.id.rawValue)) != nil) }
    }
}
