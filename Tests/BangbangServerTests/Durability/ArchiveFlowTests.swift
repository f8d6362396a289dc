// Closed orders flow from the shards into the archive: archived once their closing record is
// durable, moved out of memory only after their rating window and only at the revision the
// archive holds, and never lost when an archive write fails at any point, when the archive's
// disk is full, or when the process stops between the steps.
import BangbangCore
import Foundation
import OrderArchive
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct ArchiveFlowTests {
    static let day: Int64 = 86_400_000

    func stored(_ harness: ApplicationHarness, _ id: OrderID) throws -> ArchivedOrder? {
        try harness.app.archive.order(id: String(id.rawValue))
    }

    /// Waits until the archive holds `id` at its revision in memory, and the shard knows it.
    func waitUntilArchived(_ harness: ApplicationHarness, _ id: OrderID) async throws {
        let revision = try #require(await harness.order(id)?.revision)
        try await harness.eventually("order \(id) is archived at revision \(revision)") {
            await harness.archivedRevision(id) == revision
        }
        #expect(try stored(harness, id)?.revision == Int64(revision))
    }

    @Test func aClosedOrderIsArchivedAndLeavesMemoryOnlyAfterItsRatingWindow() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000101")
        let runner = try await harness.logIn("+8613900000102")
        let id = try await harness.completedOrder(publisher: publisher, runner: runner)
        let live = try await harness.publish(Drafts.bounty(now: harness.clock.now, deadlineIn: 29 * Self.day), by: publisher)
        try await waitUntilArchived(harness, id)
        #expect(try stored(harness, live) == nil)
        let record = try #require(try stored(harness, id))
        #expect(record.status == "completed" && record.runner == String(runner.rawValue) && record.runnerEarning == 300)
        #expect(try StoredOrder.decode(record.encoded) == (await harness.order(id)))

        // Within the window it stays, and a rating makes a newer revision, archived in turn.
        harness.clock.advance(milliseconds: 6 * Self.day)
        #expect(try await harness.sweepArchive() == 0)
        try await harness.run(.rate(stars: 5, comment: "快"), on: id, by: publisher)
        try await waitUntilArchived(harness, id)
        #expect(try stored(harness, id)?.publisherRating == 5)

        let boardBefore = harness.app.boardSequence(of: .express)
        let streamsBefore = harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence)
        harness.clock.advance(milliseconds: Self.day)
        #expect(try await harness.sweepArchive() == 1)
        #expect(harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence) == streamsBefore)
        #expect(await harness.order(id) == nil)
        #expect(await harness.order(live) != nil)
        #expect(harness.app.boardSequence(of: .express) == boardBefore)
        let late = await #expect(throws: DomainError.self) { try await harness.run(.rate(stars: 1, comment: ""), on: id, by: runner) }
        #expect(late?.code == .notFound)
        // What order.rate answers instead, once it finds the order in the archive.
        let refusal = OrderOperations.rateRefusal(archived: try stored(harness, id), by: runner)
        #expect(refusal.code == .invalidTransition && refusal.message == "the rating window has closed")
        #expect(OrderOperations.rateRefusal(archived: try stored(harness, id), by: UserID(999)).code == .notYourOrder)
        #expect(OrderOperations.rateRefusal(archived: try stored(harness, live), by: runner).code == .notFound)

        // The move is journaled: neither replay nor a snapshot brings the order back.
        try harness.restart()
        #expect(await harness.order(id) == nil)
        #expect(await harness.order(live) != nil)
        #expect(harness.app.boardSequence(of: .express) == boardBefore)
        #expect(harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence) == streamsBefore)
        harness.snapshot()
        try harness.restart(gracefully: true)
        #expect(await harness.order(id) == nil)
        #expect(try stored(harness, id)?.publisherRating == 5)
        #expect(try harness.app.archive.watermark() > 0)
    }

    @Test(arguments: [ArchiveFaultPoint.beforeBegin, .afterInsert, .beforeCommit, .afterCommit])
    func aFailedArchiveWriteLosesNothingAndIsRetried(at point: ArchiveFaultPoint) async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000111")
        let runner = try await harness.logIn("+8613900000112")
        harness.state.archiveFault.withLock { $0 = point }
        let id = try await harness.completedOrder(publisher: publisher, runner: runner)
        try await harness.eventually("an archive write failed") { harness.app.archiver.backlog.failures > 0 }
        harness.clock.advance(milliseconds: 8 * Self.day)
        #expect(try await harness.sweepArchive() == 0)
        #expect(await harness.order(id)?.status == .completed)
        #expect(await harness.archivedRevision(id) == nil)
        if point != .afterCommit { #expect(try stored(harness, id) == nil) }

        // Killed while failing: recovery finds the closed order in memory and archives it again.
        try harness.restart()
        try await harness.eventually("an archive write failed again") { harness.app.archiver.backlog.failures > 0 }
        #expect(await harness.order(id)?.status == .completed)
        harness.state.archiveFault.withLock { $0 = nil }
        try await waitUntilArchived(harness, id)
        #expect(try await harness.sweepArchive() == 1)
        #expect(await harness.order(id) == nil)
        #expect(try stored(harness, id)?.status == "completed")
    }

    @Test func aRestartDoesNotRewriteWhatTheArchiveHolds() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000151")
        let runner = try await harness.logIn("+8613900000152")
        let first = try await harness.completedOrder(publisher: publisher, runner: runner)
        let second = try await harness.completedOrder(publisher: publisher, runner: runner)
        try await waitUntilArchived(harness, first)
        try await waitUntilArchived(harness, second)
        try await harness.run(.rate(stars: 4, comment: ""), on: second, by: runner)
        try await waitUntilArchived(harness, second)
        let watermark = try harness.app.archive.watermark()
        try harness.restart()
        try await waitUntilArchived(harness, first)
        try await waitUntilArchived(harness, second)
        #expect(harness.app.metrics.archivedOrders.current == 0)
        #expect(try harness.app.archive.watermark() >= watermark)
        #expect(try harness.app.archive.revisions(of: [String(first.rawValue), String(second.rawValue), "0"]).count == 2)
    }

    @Test func aFullArchiveDiskDoesNotStopLiveRequests() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000121")
        harness.state.archiveFault.withLock { $0 = .beforeBegin }
        var cancelled: [OrderID] = []
        for _ in 0..<20 {
            let id = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
            try await harness.run(.cancel(reason: nil), on: id, by: publisher)
            cancelled.append(id)
        }
        try await harness.eventually("archive writes failed") { harness.app.archiver.backlog.failures > 0 }
        let another = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        #expect(await harness.order(another)?.status == .open)
        // The failure is counted, then logged.
        try await harness.eventually("the failure was logged") { !harness.logged("archive_write_failed").isEmpty }
        harness.clock.advance(milliseconds: 8 * Self.day)
        #expect(try await harness.sweepArchive() == 0)
        for id in cancelled { #expect(await harness.order(id)?.status == .cancelled) }

        harness.state.archiveFault.withLock { $0 = nil }
        for id in cancelled { try await waitUntilArchived(harness, id) }
        #expect(try await harness.sweepArchive() == cancelled.count)
        #expect(harness.app.archiver.backlog.pending == 0)
        try await harness.eventually("the recovery was logged") { !harness.logged("archive_write_recovered").isEmpty }
        #expect(harness.app.metrics.archiveFailures.current > 0 && harness.app.metrics.archivePending.current == 0)
        #expect(harness.app.metrics.archivedOrders.current >= cancelled.count)
    }

    /// A data directory from a server without the archive: its snapshot holds every closed
    /// order, and there is no archive file. At start they are archived, then moved out.
    @Test func closedOrdersOfADirectoryWithoutAnArchiveAreArchivedThenMovedOut() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000131")
        let runner = try await harness.logIn("+8613900000132")
        var closed: [OrderID] = []
        for _ in 0..<3 { closed.append(try await harness.completedOrder(publisher: publisher, runner: runner)) }
        let expired = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        harness.clock.advance(milliseconds: 2 * Drafts.hour)
        await withCheckedContinuation { continuation in
            harness.app.shards[expired.shard].perform { owner in
                owner.applyDueTransitions()
                continuation.resume()
            }
        }
        try await harness.eventually("the expiry is durable") { await harness.order(expired)?.status == .expired }
        closed.append(expired)
        let open = try await harness.publish(Drafts.bounty(now: harness.clock.now, deadlineIn: 29 * Self.day), by: publisher)
        harness.snapshot()
        let archiveFile = harness.configuration.dataDirectory + "/" + Application.archiveFileName
        try harness.restart(gracefully: true) {
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: archiveFile + suffix) {
                try FileManager.default.removeItem(atPath: archiveFile + suffix)
            }
        }

        harness.clock.advance(milliseconds: 8 * Self.day)
        for id in closed { try await waitUntilArchived(harness, id) }
        #expect(try stored(harness, open) == nil)
        #expect(try await harness.sweepArchive() == closed.count)
        for id in closed { #expect(await harness.order(id) == nil) }
        #expect(await harness.order(open)?.status == .open)
        #expect(try stored(harness, expired)?.status == "expired")
    }

    @Test func snapshotsKeepTheJournalTheArchiveDoesNotCoverYet() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000141")
        harness.state.archiveFault.withLock { $0 = .beforeBegin }
        let id = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        try await harness.run(.cancel(reason: nil), on: id, by: publisher)
        try await harness.eventually("an archive write failed") { harness.app.archiver.backlog.failures > 0 }
        let covered = harness.app.archiver.coveredSequence
        for _ in 0..<3 {
            _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
            harness.snapshot()
        }
        #expect(harness.app.archiver.coveredSequence == covered)
        let held = harness.logged("snapshot_written").map { $0.contains("deleted_segments=0") }
        #expect(held == [true, true, true])

        harness.state.archiveFault.withLock { $0 = nil }
        try await waitUntilArchived(harness, id)
        #expect(harness.app.archiver.coveredSequence > covered)
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        harness.snapshot()
        #expect(harness.logged("snapshot_written").last?.contains("deleted_segments=0") == false)
    }
}
