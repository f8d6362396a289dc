// A journal write that fails (here: ENOSPC injected under the journal) is refused with
// `storage_unavailable`, leaves memory exactly as the disk has it, keeps queries working while
// the disk stays full, and lets changes through again once space returns.
import BangbangCore
import BangbangProtocol
import Foundation
import Journal
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
import Synchronization

@Suite struct StorageFailureTests {
    private func expectStorageUnavailable(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            try await body()
            Issue.record("the change succeeded on a full disk", sourceLocation: sourceLocation)
        } catch let error as DomainError {
            #expect(error.code == .storageUnavailable, sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aFailedWriteIsRefusedAndMemoryMatchesTheDisk() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000071")
        let runner = try await harness.logIn("+8613900000072")
        let kept = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        let accountsBefore = await harness.accountState()
        let shardsBefore = await harness.shardStates()

        harness.state.isDiskFull.withLock { $0 = true }
        await expectStorageUnavailable { _ = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher) }
        try await harness.waitForRebuild()
        #expect(await harness.shardStates() == shardsBefore)
        await expectStorageUnavailable { try await harness.run(.accept(isVerifiedRunner: true), on: kept, by: runner) }
        await expectStorageUnavailable { try await harness.logIn("+8613900000073") }
        try await harness.waitForRebuild()
        // Queries keep working, and show nothing of the refused changes.
        #expect(await harness.order(kept)?.status == .open)
        #expect(await harness.order(kept)?.runner == nil)
        #expect(await harness.accountState() == accountsBefore)
        #expect(await harness.shardStates() == shardsBefore)
        #expect(!harness.logged("state_rebuilt").isEmpty)
        #expect(harness.app.tracking.withLock { $0.failures } >= 3)

        // Space returns: changes go through, and only they are on disk.
        harness.state.isDiskFull.withLock { $0 = false }
        try await harness.run(.accept(isVerifiedRunner: true), on: kept, by: runner)
        let later = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        let accountsAfter = await harness.accountState()
        let shardsAfter = await harness.shardStates()
        try harness.restart()
        #expect(await harness.accountState() == accountsAfter)
        #expect(await harness.shardStates() == shardsAfter)
        #expect(await harness.order(kept)?.runner == runner)
        #expect(await harness.order(later)?.status == .open)
        #expect(harness.logged("journal_recovery").isEmpty, "a refused write must leave no damage to repair")
    }

    @Test func aSnapshotIsNotTakenWhileMemoryIsAheadOfTheDisk() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000081")
        // Hold the rebuild back by occupying the maintenance queue, so the cut sees the failure.
        let release = DispatchSemaphore(value: 0)
        harness.app.maintenanceQueue.async { release.wait() }
        harness.state.isDiskFull.withLock { $0 = true }
        await expectStorageUnavailable { _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher) }
        #expect(harness.app.tracking.withLock { $0.isRebuildPending })
        release.signal()
        // The cut is queued behind the rebuild, which runs first: so it must succeed and be clean.
        harness.state.isDiskFull.withLock { $0 = false }
        let cut = try #require(harness.app.maintenanceQueue.sync { harness.app.takeSnapshotCut() })
        #expect(cut.contents.shards.allSatisfy { $0.orders.isEmpty })
    }

    @Test func theJournalHoldsAfterAFailureUntilResumed() throws {
        let directory = try makeTemporaryDirectory("bangbang-hold")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let isDiskFull = Mutex(false)
        var configuration = JournalConfiguration(syncPolicy: .always)
        configuration.holdsAfterFailure = true
        configuration.simulateFullDisk(when: { isDiskFull.withLock { $0 } })
        let (journal, _) = try WriteAheadLog.open(directory: directory, configuration: configuration)

        let outcomes = Mutex<[Bool]>([])
        let done = DispatchGroup()
        func append(_ text: String) {
            done.enter()
            journal.append(Array(text.utf8)) { result in
                let isStored: Bool
                if case .success = result { isStored = true } else { isStored = false }
                outcomes.withLock { $0.append(isStored) }
                done.leave()
            }
            done.wait()
        }
        append("kept")
        isDiskFull.withLock { $0 = true }
        append("refused")
        #expect(journal.isHoldingAfterFailure)
        isDiskFull.withLock { $0 = false }
        append("depends on the refused one")   // space is back, but the journal still holds
        #expect(outcomes.withLock { $0 } == [true, false, false])
        journal.resumeAfterFailure()
        #expect(!journal.isHoldingAfterFailure)
        append("after the rebuild")
        let readBack = try journal.readBack()
        #expect(readBack.records.map { String(decoding: $0.payload, as: UTF8.self) } == ["kept", "after the rebuild"])
        try journal.close()
    }
}
