// The account partition on a stream of its own (PartitionedStorage.swift), over a real JetStream
// server: the board partition's records go to `BB_P0`, the account partition's to `BB_A0`, every
// personal event through the inbox `BB_I0`, and each partition's snapshot object holds its own
// half (the account partition's with the inbox reader's state, the inbox purged through it). A
// node taking both partitions over from the snapshots and the streams after them has the same
// accounts, boards and personal streams, each event numbered once, and numbers what comes next.
import BangbangCore
import Cluster
import Dispatch
import Foundation
import InboxProtocol
import Journal
import NATSClient
import NATSTestSupport
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct PartitionedStorageTests {
    static let secret = [UInt8](repeating: 9, count: 32)
    static let boards = PartitionID(space: .boards, index: 0)
    static let accounts = PartitionID(space: .accounts, index: 0)

    /// What a node taking both partitions recovers: each partition's snapshot and stream, or
    /// with `importing`, a single node's journal brought into the empty cluster.
    /// With `pair` of `map`, the partitions `p<pair>` and `a<pair>` of a deployment of several.
    func storage(_ jetStream: JetStream, node: String, importing: RecoveredLog? = nil,
                 pair: Int = 0, of map: PartitionMap = PartitionMap(partitionCount: 1)) async throws -> ApplicationStorage {
        let boards = PartitionID(space: .boards, index: pair), accounts = PartitionID(space: .accounts, index: pair)
        let boardsJournal = try await PartitionJournal.create(boards, in: jetStream, replicas: 1)
        let accountsJournal = try await PartitionJournal.create(accounts, in: jetStream, replicas: 1)
        _ = try await PartitionInbox.create(accounts, in: jetStream, replicas: 1)
        let snapshots = try await SnapshotStore.create(in: jetStream, replicas: 1)
        let (boardsLog, boardsLast) = try await StreamJournal.recover(boardsJournal, from: snapshots)
        let (accountsLog, accountsLast) = try await StreamJournal.recover(accountsJournal, from: snapshots)
        let accountsPartition = AccountsPartitionStorage(recovered: accountsLog, makeJournal: { queue, observer in
            let journal = StreamJournal(journal: accountsJournal, snapshots: snapshots, nodeID: node, end: accountsLast,
                                        snapshotRevision: accountsLog.snapshotRevision,
                                        completionQueue: queue, onFailure: { _ in })
            journal.observeBatches(observer)
            return journal
        }, linkInbox: { parameters in InboxWiring.make(parameters, jetStream: jetStream, map: map) })
        var storage = ApplicationStorage.journal(recovered: importing ?? boardsLog, sessionSecret: Self.secret) { queue, observer in
            let journal = StreamJournal(journal: boardsJournal, snapshots: snapshots, nodeID: node, end: boardsLast,
                                        snapshotRevision: boardsLog.snapshotRevision,
                                        completionQueue: queue, onFailure: { _ in })
            journal.observeBatches(observer)
            return journal
        }
        storage.isImport = importing != nil
        storage.accountsPartition = accountsPartition
        storage.partitionCount = map.partitionCount
        storage.pair = pair
        return storage
    }

    /// Every personal event of the records completed so far is applied: each was handed to its
    /// sender (on the publishing queue, after the reply), the senders have nothing undelivered,
    /// and the follower has applied the inbox to its end.
    func settled(_ harness: ApplicationHarness, _ jetStream: JetStream) async throws {
        let inbox = try #require(harness.app.inbox as? InboxWiring)
        harness.app.publisher.queue.sync {}
        try await harness.eventually("every personal event is numbered") {
            guard inbox.senders.values.allSatisfy({ $0.undeliveredCount == 0 }) else { return false }
            let last = try await jetStream.streamInfo(inbox.follower.inbox.streamName).lastSequence
            return harness.app.publisher.queue.sync { inbox.follower.state.position } == last
        }
    }

    /// Each user's stream as (sequence, message) pairs.
    func streams(_ harness: ApplicationHarness) -> [UserID: [UInt64: String]] {
        harness.app.publisher.accounts.streams.snapshot().mapValues { stream in
            Dictionary(uniqueKeysWithValues: stream.live.map { ($0.sequence, String(decoding: $0.message, as: UTF8.self)) })
        }
    }

    func verify(_ user: UserID, by admin: UserID, approving: Bool, in harness: ApplicationHarness) async throws {
        try await harness.changeAccounts { store, now in
            try store.decideVerificationSubmission(user: user, realName: "李雷", studentID: "2024\(user.rawValue)", school: "north", now: now)
        }
        try await harness.changeAccounts { store, now in
            approving ? try store.decideVerificationApproval(administrator: admin, user: user, now: now)
                : try store.decideVerificationRejection(administrator: admin, user: user, reason: "blurry", now: now)
        }
    }

    @Test func eachPartitionsSnapshotAndStreamAreItsStateAndEveryPersonalEventIsNumberedOnce() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let connection = try await connectClient(to: nats, name: "owner")
        let jetStream = JetStream(connection: connection)

        let first = try ApplicationHarness(cluster: try await storage(jetStream, node: "a"))
        let admin = try await first.logIn(ApplicationHarness.adminPhone)
        let publisher = try await first.logIn("+8613900009001")
        let runner = try await first.logIn("+8613900009002")
        // The account partition's own personal events: a verification decided.
        try await verify(runner, by: admin, approving: true, in: first)
        let accepted = try await first.publish(Drafts.express(now: first.clock.now), by: publisher)
        try await first.run(.accept(isVerifiedRunner: true), on: accepted, by: runner)
        try await settled(first, jetStream)
        let cut = try #require(first.snapshot())
        let covered = try #require(cut.partitioned)
        #expect(cut.sequence == 2 && covered.accountsSequence == 5, "two order records in BB_P0; three logins, a submission, a decision in BB_A0")
        // After the snapshot: records in both streams, events on both sides of the follower's cut.
        let late = try await first.logIn("+8613900009003")
        try await first.run(.pickUp, on: accepted, by: runner)
        let open = try await first.publish(Drafts.bounty(now: first.clock.now), by: late)
        try await first.run(.raiseTip(to: 900), on: open, by: late)
        try await verify(late, by: admin, approving: false, in: first)
        try await settled(first, jetStream)

        // What an operator sees of it: every message applied as this process's sources handed
        // it over, none read back, nothing left undelivered.
        let metrics = first.app.metrics.inbox
        let inboxEnd = try await jetStream.streamInfo(PartitionInbox.streamName(of: Self.accounts)).lastSequence
        #expect(metrics.messagesHandedOver.current == Int(inboxEnd) && metrics.messagesRead.current == 0)
        let rendered = MetricsRenderer.render(first.app.metrics, openConnections: 0, residentBytes: 0)
        #expect(rendered.contains("bangbang_inbox_applied_position \(inboxEnd)\n"))
        #expect(rendered.contains("bangbang_inbox_undelivered_entries 0\n"))
        // Every record of both journals counted in a stream message's batch.
        let batches = first.app.metrics.journalBatchRecords.snapshot
        let records = Int(first.app.journal.nextSequence - 1) + Int(first.app.accountsJournal.nextSequence - 1)
        #expect(Int(batches.sum) == records && batches.count >= 1 && batches.count <= records, "\(batches) for \(records) records")
        #expect(first.app.metrics.journalFsyncLatency.snapshot.count == batches.count)

        let accountState = await first.accountState()
        let shards = await first.shardStates()
        let streams = streams(first)
        #expect(streams[publisher]?.keys.sorted() == [1, 2, 3], "published, accepted, picked up")
        #expect(streams[runner]?.keys.sorted() == [1, 2, 3], "verification decided, accepted, picked up")
        #expect(streams[late]?.keys.sorted() == [1, 2, 3], "published, tip raised, verification decided")

        // Each partition's object holds its own half; the account partition's keeps the reader.
        let snapshots = try await SnapshotStore.create(in: jetStream, replicas: 1)
        let boardsObject = try #require(try await snapshots.latest(of: Self.boards))
        let accountsObject = try #require(try await snapshots.latest(of: Self.accounts))
        #expect(try BoardsPartitionState.decode(boardsObject.state) == cut.contents.boardsPartition)
        #expect(try AccountsPartitionState.decode(accountsObject.state) == cut.contents.accountsPartition)
        #expect(boardsObject.outbox != nil && boardsObject.inbox == nil)
        let reader = try InboxStateCodec.decodeReader(try #require(accountsObject.inbox)[...])
        #expect(reader.position > 0 && reader.applied[Publisher.boardsSource] != nil && reader.applied[Publisher.accountsSource] != nil)
        // What that reader applied is not read again: the inbox is purged through it.
        let inbox = try await jetStream.streamInfo(PartitionInbox.streamName(of: Self.accounts))
        #expect(inbox.firstSequence == reader.position + 1 && inbox.lastSequence > reader.position)

        // The owner dies (no final snapshot); another takes both partitions over.
        first.app.tracking.withLock { $0.isShuttingDown = true }
        try first.app.closeJournals()
        let second = try ApplicationHarness(cluster: try await storage(jetStream, node: "b"))
        #expect(await second.accountState() == accountState)
        #expect(await second.shardStates() == shards)
        // Before it serves: the inbox is applied to its end once the application is made.
        #expect(self.streams(second) == streams, "the streams a replay from the snapshots numbers are the live ones")
        try await settled(second, jetStream)
        #expect(self.streams(second) == streams)

        // What comes next is numbered after them, once.
        try await second.run(.cancel(reason: "no longer needed"), on: open, by: late)
        try await second.eventually("the cancellation reaches its publisher's stream") {
            self.streams(second)[late]?.count == 4
        }
        try await settled(second, jetStream)
        let after = self.streams(second)
        #expect(after[late]?.keys.sorted() == [1, 2, 3, 4])
        #expect(after[late]?.filter { $0.key <= 3 } == streams[late])
        #expect(after[publisher] == streams[publisher])
        try second.app.closeJournals()
        await connection.close()
    }

    /// A single node's journal (a snapshot of both partitions and records of both after it)
    /// imported into an empty cluster: its personal streams numbered as the single node numbered
    /// them, stored in one write before anything is served; the next owner has the same and
    /// numbers on from there, and its first snapshot gives each partition its own half.
    @Test func anImportedSingleNodeKeepsItsNumberingAndStoresEachPartitionsHalf() async throws {
        let single = try ApplicationHarness()
        let admin = try await single.logIn(ApplicationHarness.adminPhone)
        let publisher = try await single.logIn("+8613900009101")
        let runner = try await single.logIn("+8613900009102")
        let accepted = try await single.publish(Drafts.express(now: single.clock.now), by: publisher)
        try #require(single.snapshot() != nil)
        try await verify(runner, by: admin, approving: true, in: single)
        try await single.run(.accept(isVerifiedRunner: true), on: accepted, by: runner)
        let open = try await single.publish(Drafts.bounty(now: single.clock.now), by: runner)
        let accountState = await single.accountState()
        let shards = await single.shardStates()
        let streams = streams(single)
        #expect(streams[publisher]?.keys.sorted() == [1, 2] && streams[runner]?.keys.sorted() == [1, 2, 3])
        single.app.tracking.withLock { $0.isShuttingDown = true }
        try single.app.closeJournals()
        let (local, recovery) = try WriteAheadLog.open(directory: single.configuration.dataDirectory)
        try local.close()
        let singleNode = RecoveredLog(recovery)
        #expect(singleNode.snapshot != nil && !singleNode.records.isEmpty, "a snapshot and records after it")

        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let connection = try await connectClient(to: nats, name: "owner")
        let jetStream = JetStream(connection: connection)
        let imported = try ApplicationHarness(cluster: try await storage(jetStream, node: "a", importing: singleNode))
        #expect(await imported.accountState() == accountState)
        #expect(await imported.shardStates() == shards)
        #expect(self.streams(imported) == streams)
        let inbox = try await jetStream.streamInfo(PartitionInbox.streamName(of: Self.accounts))
        #expect(inbox.lastSequence == 0, "an import's events are numbered in process, never sent through the inbox")
        // One write, the import's commit point: both partitions' state in `p0`'s object.
        let snapshots = try await SnapshotStore.create(in: jetStream, replicas: 1)
        let importObject = try #require(try await snapshots.latest(of: Self.boards))
        #expect(importObject.sequence == 0, "the streams hold nothing of it")
        #expect(try SnapshotContents.decode(importObject.state) == SnapshotContents(boards: BoardsPartitionState(
            shards: shards, boardSequences: imported.app.publisher.boards.sequences.withLock { $0 }),
            accounts: AccountsPartitionState(accounts: accountState, streams: imported.app.publisher.accounts.streams.snapshot())))
        #expect(try await snapshots.latest(of: Self.accounts) == nil)

        // The importing node dies; the next owner has it all from that object, and numbers on.
        imported.app.tracking.withLock { $0.isShuttingDown = true }
        try imported.app.closeJournals()
        let next = try ApplicationHarness(cluster: try await storage(jetStream, node: "b"))
        #expect(await next.accountState() == accountState)
        #expect(await next.shardStates() == shards)
        #expect(self.streams(next) == streams)
        try await next.run(.cancel(reason: nil), on: open, by: runner)
        try await settled(next, jetStream)
        #expect(self.streams(next)[runner]?.keys.sorted() == [1, 2, 3, 4])
        let after = self.streams(next)
        // Its first snapshot gives each partition its half; `a0`'s is then read, not the import's.
        try #require(next.snapshot() != nil)
        #expect(try BoardsPartitionState.decode(try #require(try await snapshots.latest(of: Self.boards)).state).shards
                == (await next.shardStates()))
        #expect(try await snapshots.latest(of: Self.accounts) != nil)
        next.app.tracking.withLock { $0.isShuttingDown = true }
        try next.app.closeJournals()
        let third = try ApplicationHarness(cluster: try await storage(jetStream, node: "c"))
        #expect(await third.accountState() == accountState)
        try await settled(third, jetStream)
        #expect(self.streams(third) == after)
        try third.app.closeJournals()
        await connection.close()
    }

    /// Two applications, each a pair of a deployment's two (`p0` with `a0`, `p1` with `a1`), as
    /// two nodes run them: each registers users and numbers orders of its own residue, a change to
    /// an order of one reaches the stream of a user of the other through that pair's inbox,
    /// numbered there once, and a node taking a pair over from its snapshot and streams goes on
    /// with that pair's ids and numbering.
    @Test func eachPairOfSeveralHandsOutItsOwnIdsAndNumbersItsOwnUsersStreams() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let connection = try await connectClient(to: nats, name: "owners")
        let jetStream = JetStream(connection: connection)
        let map = PartitionMap(partitionCount: 2)
        for index in 0..<2 { _ = try await PartitionInbox.create(PartitionID(space: .accounts, index: index), in: jetStream, replicas: 1) }
        let zero = try ApplicationHarness(cluster: try await storage(jetStream, node: "a", pair: 0, of: map))
        let one = try ApplicationHarness(cluster: try await storage(jetStream, node: "b", pair: 1, of: map))
        let publisher = try await zero.logIn("+8613900009201")
        let runner = try await one.logIn("+8613900009202")
        #expect(publisher.rawValue % 2 == 0 && runner.rawValue % 2 == 1, "user ids of each pair's residue: \(publisher), \(runner)")
        let order = try await zero.publish(Drafts.express(now: zero.clock.now), by: publisher)
        let bounty = try await one.publish(Drafts.bounty(now: one.clock.now), by: runner)
        #expect(order.serial % 2 == 0 && bounty.serial % 2 == 1, "order serials of each pair's residue: \(order), \(bounty)")
        #expect(map.partition(ofOrderSerial: order.serial) == Self.boards)
        // The runner, whose account is in `a1`, takes `p0`'s order.
        try await zero.run(.accept(isVerifiedRunner: true), on: order, by: runner)
        try await zero.run(.pickUp, on: order, by: runner)
        try await settled(zero, jetStream)
        try await settled(one, jetStream)
        try await one.eventually("the runner's stream has p0's events") { self.streams(one)[runner]?.count == 3 }
        let before = streams(one)
        #expect(before[runner]?.keys.sorted() == [1, 2, 3], "published its bounty, accepted, picked up")
        #expect(streams(zero)[publisher]?.keys.sorted() == [1, 2, 3], "published, accepted, picked up")
        #expect(streams(zero)[runner] == nil && before[publisher] == nil, "each user's stream is in its own pair only")

        // `one`'s node dies after a snapshot; another takes `p1` and `a1` over.
        try #require(one.snapshot() != nil)
        let shards = await one.shardStates()
        one.app.tracking.withLock { $0.isShuttingDown = true }
        try one.app.closeJournals()
        let next = try ApplicationHarness(cluster: try await storage(jetStream, node: "c", pair: 1, of: map))
        #expect(await next.shardStates() == shards)
        try await settled(next, jetStream)
        #expect(streams(next) == before)
        let more = try await next.publish(Drafts.bounty(now: next.clock.now), by: runner)
        #expect(more.serial % 2 == 1 && more.serial > bounty.serial, "\(more) after \(bounty)")
        let newcomer = try await next.logIn("+8613900009203")
        #expect(newcomer.rawValue % 2 == 1 && newcomer.rawValue > runner.rawValue)
        // And `p0`'s next change to the runner's order is numbered after what it had.
        try await zero.run(.deliver(code: nil), on: order, by: runner)
        try await settled(zero, jetStream)
        try await next.eventually("the runner's stream goes on") { self.streams(next)[runner]?.count == 5 }
        #expect(streams(next)[runner]?.keys.sorted() == [1, 2, 3, 4, 5], "the new bounty, then the delivery")
        try zero.app.closeJournals()
        try next.app.closeJournals()
        await connection.close()
    }
}
