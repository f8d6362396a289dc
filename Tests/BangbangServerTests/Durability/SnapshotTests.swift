// Snapshots taken while changes keep coming: the cut holds exactly the records up to its
// sequence, a snapshot plus the journal after it restores everything, a damaged snapshot falls
// back to the previous one, and a graceful shutdown leaves nothing to replay.
import BangbangCore
import Foundation
import Journal
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage
import Synchronization

@Suite struct SnapshotTests {
    /// Publishers and logins on every owner at once, while cuts are taken; then each cut is
    /// compared with the journal's records up to its sequence, replayed from nothing. A cut one
    /// record early or late, or torn between owners, differs.
    @Test func aCutHoldsExactlyTheRecordsUpToItsSequence() async throws {
        let harness = try ApplicationHarness(shardsPerType: 2)
        let publishers = try await (0..<4).asyncMap { try await harness.logIn("+86139000001\($0)0") }
        let now = harness.clock.now
        let taken = try await withThrowingTaskGroup(of: [SnapshotCut].self) { group in
            for publisher in publishers {
                group.addTask {
                    for round in 0..<60 {
                        let draft = round % 2 == 0 ? Drafts.bounty(now: now) : Drafts.express(now: now)
                        let id = try await harness.publish(draft, by: publisher)
                        if round % 3 == 0 { try await harness.run(.raiseTip(to: 1_000 + Cents(round)), on: id, by: publisher) }
                    }
                    return []
                }
            }
            group.addTask {
                for round in 0..<40 { try await harness.logIn("+861390002\(String(format: "%04d", round))") }
                return []
            }
            group.addTask {
                var cuts: [SnapshotCut] = []
                for _ in 0..<8 {
                    let cut = harness.app.maintenanceQueue.sync { harness.app.takeSnapshotCut() }
                    if let cut { cuts.append(cut) }
                    try await Task.sleep(for: .milliseconds(3))
                }
                return cuts
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(taken.count == 8)
        #expect(Set(taken.map(\.sequence)).count > 2, "the cuts should fall at different points of the load")

        let configuration = harness.configuration
        let policy = harness.app.accounts.store.policy
        try harness.app.journal.close()
        let (journal, recovery) = try WriteAheadLog.open(directory: configuration.dataDirectory)
        defer { try? journal.close() }
        #expect(recovery.report.snapshotSequence == 0)
        for cut in taken {
            var replayed = try OwnedState(nil, policy: policy, layout: harness.app.layout)
            try harness.app.replay(recovery.records.filter { $0.sequence <= cut.sequence }, into: &replayed, publishing: false)
            #expect(replayed.accounts.state == cut.contents.accounts, "accounts at cut \(cut.sequence)")
            #expect(replayed.shards == cut.contents.shards, "shards at cut \(cut.sequence)")
            // Board numbering counts published order changes: the same records, per type.
            var counts: [OrderType: UInt64] = [:]
            for record in recovery.records where record.sequence <= cut.sequence {
                if case .order(let index, _) = try JournalEntry.decode(record.payload) {
                    counts[harness.app.layout.type(ofShard: index), default: 0] += 1
                }
            }
            #expect(cut.contents.boardSequences.filter { $0.value > 0 } == counts, "board numbering at cut \(cut.sequence)")
        }
    }

    @Test func aSnapshotPlusTheJournalAfterItRestoresEverything() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000031")
        let first = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        let cut = try #require(harness.snapshot())
        let runner = try await harness.logIn("+8613900000032")
        try await harness.run(.accept(isVerifiedRunner: true), on: first, by: runner)
        let second = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)

        let accounts = await harness.accountState()
        let shards = await harness.shardStates()
        let streams = harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence)
        let messages = harness.app.publisher.accounts.streams.snapshot().mapValues { $0.live.map(\.message) }
        try harness.restart()
        let recovered = try #require(harness.logged("recovered").first)
        #expect(recovered.contains("snapshot_sequence=\(cut.sequence) "))
        #expect(harness.app.publisher.accounts.streams.snapshot().mapValues { $0.live.map(\.message) } == messages)
        #expect(recovered.contains("records=3 "))
        #expect(await harness.accountState() == accounts)
        #expect(await harness.shardStates() == shards)
        #expect(harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence) == streams)
        #expect(await harness.order(first)?.runner == runner)
        #expect(await harness.order(second)?.status == .open)
        // New ids continue after the recovered ones.
        let third = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        #expect(third.rawValue > second.rawValue)
    }

    @Test func aDamagedSnapshotFallsBackToThePreviousOneAndTheJournal() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000041")
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        let older = try #require(harness.snapshot())
        _ = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        let newer = try #require(harness.snapshot())
        _ = try await harness.publish(Drafts.purchase(now: harness.clock.now), by: publisher)
        let shards = await harness.shardStates()
        try harness.restart()

        // Flip one byte in the middle of the newest snapshot, with the server stopped.
        try harness.app.journal.close()
        let directory = harness.configuration.dataDirectory
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory)
            .first { $0.hasPrefix("snapshot") && $0.contains(String(newer.sequence)) && !$0.hasSuffix(".corrupt") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))

        try harness.restart()
        #expect(await harness.shardStates() == shards)
        let recovered = try #require(harness.logged("recovered").first)
        #expect(recovered.contains("snapshot_sequence=\(older.sequence) "))
        #expect(!harness.logged("journal_recovery").filter { $0.contains(".corrupt") }.isEmpty)
    }

    @Test func aGracefulShutdownLeavesNothingToReplay() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000051")
        let order = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        let shards = await harness.shardStates()
        try harness.restart(gracefully: true)
        let recovered = try #require(harness.logged("recovered").first)
        #expect(recovered.contains("records=0 "))
        #expect(!recovered.contains("snapshot_sequence=0 "))
        #expect(await harness.shardStates() == shards)
        #expect(await harness.order(order)?.publisher == publisher)
        // With nothing changed since, the next shutdown writes no new snapshot.
        #expect(!harness.app.writeFinalSnapshot())
    }

    @Test func periodicSnapshotsFollowJournalGrowth() async throws {
        let harness = try ApplicationHarness()
        harness.configuration.snapshotJournalBytes = 1
        try harness.restart()
        harness.app.attach(to: [])
        let publisher = try await harness.logIn("+8613900000061")
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        _ = await eventually { !harness.logged("snapshot_written").isEmpty }
        let written = harness.logged("snapshot_written")
        let line = try #require(written.first)
        #expect(line.contains("reason=journal_bytes"))
        #expect(harness.app.metrics.snapshotBytes.current > 0)
        #expect(harness.app.metrics.snapshotDuration.snapshot.count >= 1)
    }
}

/// The first snapshot layout: personal stream messages as arrays of byte values.
private struct VersionOneContents: Encodable {
    var formatVersion = 1
    var accounts: AccountState
    var shards: [BoardShard]
    var streams: [UserID: PersonalStreams.Stream]
    var boardSequences: [OrderType: UInt64]
}

@Suite struct SnapshotContentsTests {
    private func sampleStreams() -> [UserID: PersonalStreams.Stream] {
        let message = Array(#"{"event":"order.changed","seq":7,"data":{"title":"取快递"}}"#.utf8)
        return [UserID(3): PersonalStreams.Stream(lastSequence: 7, entries: [PersonalStreams.Entry(sequence: 7, at: TestClock.start, message: message)])]
    }

    @Test func streamsRoundTripAsText() throws {
        let contents = SnapshotContents(accounts: AccountState(), shards: [BoardShard(index: 0)], streams: sampleStreams(),
                                        boardSequences: [.bounty: 4])
        let bytes = try contents.encoded()
        #expect(bytes.first == SnapshotContents.keyedBinaryTag)
        // Messages are stored as their text, not as arrays of byte values.
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""event":"order.changed""#))
        let decoded = try SnapshotContents.decode(bytes)
        #expect(decoded.streams[UserID(3)]?.live.map(\.message) == sampleStreams()[UserID(3)]?.live.map(\.message))
        #expect(decoded.streams[UserID(3)]?.lastSequence == 7)
        #expect(decoded.boardSequences == [.bounty: 4])
    }

    /// Orders in a snapshot are written directly, not through Codable; the bytes must be the same.
    @Test func ordersInASnapshotAreWrittenExactlyAsCodableWritesThem() throws {
        var shard = BoardShard(index: 1)
        var random = SystemRandomNumberGenerator()
        let now = TestClock.start
        for (serial, draft) in [Drafts.bounty(now: now), Drafts.express(now: now), Drafts.bounty(now: now)].enumerated() {
            let event = try shard.decidePublish(draft, by: UserID(UInt64(serial + 1)), now: now, rules: OrderRules(), using: &random)
            _ = shard.apply(event)
            if serial == 1 {
                let accept = try shard.decide(.accept(isVerifiedRunner: true), on: event.orderID, by: UserID(9), now: now,
                                              rules: OrderRules())
                _ = shard.apply(accept)
            }
        }
        let contents = SnapshotContents(accounts: AccountState(), shards: [BoardShard(index: 0), shard], streams: sampleStreams(),
                                        boardSequences: [.bounty: 2, .express: 1])
        let direct = try KeyedBinaryEncoder.encode(contents, after: SnapshotContents.keyedBinaryTag)
        let codable = try KeyedBinaryEncoder.encode(contents, after: SnapshotContents.keyedBinaryTag, usesDirectWriters: false)
        #expect(direct == codable)
        #expect(try SnapshotContents.decode(direct).shards[1].orders == shard.orders)
    }

    /// A shard writes itself directly (orders by ascending id); the bytes must be what its
    /// `encode(to:)` makes through Codable, for an empty shard and for one whose table holds its
    /// orders in hash order, with orders gone to the archive and in several states.
    @Test func aShardIsWrittenExactlyAsCodableWritesIt() throws {
        var shard = BoardShard(index: 5)
        var random = SeededGenerator(seed: 11)
        let now = TestClock.start
        var ids: [OrderID] = []
        for serial in 0..<40 {
            let draft = serial % 3 == 0 ? Drafts.bounty(now: now) : Drafts.express(now: now, code: serial % 2 == 0)
            let event = try shard.decidePublish(draft, by: UserID(UInt64(serial % 4 + 1)), now: now, rules: OrderRules(), using: &random)
            ids.append(shard.apply(event).after.id)
        }
        for id in ids.prefix(10) {
            _ = shard.apply(try shard.decide(.accept(isVerifiedRunner: true), on: id, by: UserID(9), now: now, rules: OrderRules()))
        }
        for id in ids.suffix(5) {
            _ = shard.apply(try shard.decide(.cancel(reason: "changed my mind"), on: id, by: shard.order(id)!.publisher, now: now,
                                             rules: OrderRules()))
        }
        _ = shard.apply(OrderEvent(orderID: ids[39], at: now, actor: nil, change: .movedToArchive, notify: []))
        #expect(!shard.orders.keys.elementsEqual(shard.orders.keys.sorted()), "the table should hold its orders unsorted")
        for candidate in [BoardShard(index: 0), shard] {
            var writer = KeyedBinaryWriter(header: SnapshotContents.keyedBinaryTag)
            writer.write(candidate)
            let codable = try KeyedBinaryEncoder.encode(candidate, after: SnapshotContents.keyedBinaryTag, usesDirectWriters: false)
            let isIdentical = writer.bytes == codable
            #expect(isIdentical, "shard \(candidate.index): \(writer.bytes.count) bytes written directly, \(codable.count) through Codable")
            #expect(try KeyedBinaryDecoder.decode(BoardShard.self, from: writer.bytes.dropFirst()) == candidate)
        }
    }

    @Test func versionTwoJSONSnapshotsAreStillRead() throws {
        let contents = SnapshotContents(accounts: AccountState(), shards: [BoardShard(index: 0)], streams: sampleStreams(),
                                        boardSequences: [.group: 9])
        let json = try contents.encodedAsJSON()
        #expect(json.first == UInt8(ascii: "{"))
        let decoded = try SnapshotContents.decode(json)
        #expect(decoded.streams[UserID(3)]?.live.map(\.message) == sampleStreams()[UserID(3)]?.live.map(\.message))
        #expect(decoded.boardSequences == [.group: 9])
    }

    @Test func bytesInNoKnownFormatAreRefusedClearly() {
        #expect(throws: (any Error).self) { try SnapshotContents.decode([0x7F, 1, 2]) }
        #expect(throws: (any Error).self) { try SnapshotContents.decode([]) }
    }

    @Test func versionOneSnapshotsAreStillRead() throws {
        let old = VersionOneContents(accounts: AccountState(), shards: [BoardShard(index: 0)], streams: sampleStreams(), boardSequences: [:])
        let decoded = try SnapshotContents.decode(Array(try JSONEncoder().encode(old)))
        #expect(decoded.streams[UserID(3)]?.live.map(\.message) == sampleStreams()[UserID(3)]?.live.map(\.message))
        #expect(decoded.formatVersion == SnapshotContents.formatVersion)
    }

    @Test func anUnknownVersionIsRefusedClearly() throws {
        var old = VersionOneContents(accounts: AccountState(), shards: [], streams: [:], boardSequences: [:])
        old.formatVersion = 9
        do {
            _ = try SnapshotContents.decode(Array(try JSONEncoder().encode(old)))
            Issue.record("a snapshot of format 9 was accepted")
        } catch {
            #expect("\(error)".contains("snapshot format 9 is not supported"))
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
