// Partition journals against a real 3-node JetStream cluster: a stale owner's append is fenced,
// an acknowledged append survives `kill -9` of a NATS node, and recovery is the latest snapshot
// plus the records after it.
import Foundation
import NATSClient
import NATSTestSupport
import Testing
import TestSupport
@testable import Cluster

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct JournalIntegrationTests {
    func record(_ text: String) -> [UInt8] { Array(text.utf8) }

    func replayAll(_ journal: PartitionJournal, after sequence: UInt64 = 0) async throws -> [(UInt64, String)] {
        var records: [(UInt64, String)] = []
        _ = try await journal.replay(after: sequence) { records.append(($0, String(decoding: $1, as: UTF8.self))) }
        return records
    }

    @Test func aStaleOwnersAppendIsFencedAndStoresNothing() async throws {
        try await withSharedCluster { cluster in
            let oldOwner = try await connectClient(to: cluster, first: 0, name: "old-owner")
            let newOwner = try await connectClient(to: cluster, first: 1, name: "new-owner")
            let partition = PartitionID(space: .boards, index: 5)
            let stale = try await PartitionJournal.create(partition, in: JetStream(connection: oldOwner))
            #expect(stale.streamName == "BB_P5" && stale.subject == "bb.journal.p5")
            var last: UInt64 = 0
            for index in 1...3 { last = try await stale.append(record("old \(index)"), after: last) }
            #expect(last == 3)

            // The new owner replays to the end, then appends after what it read.
            let current = PartitionJournal(partition: partition, jetStream: JetStream(connection: newOwner))
            let replayed = try await replayAll(current)
            #expect(replayed.map(\.0) == [1, 2, 3])
            let next = try await current.append(record("new 4"), after: replayed.last!.0)
            #expect(next == 4)

            // The old owner still thinks the journal ends at 3.
            await #expect(throws: JournalError.fenced(partition, expected: 3)) {
                try await stale.append(self.record("old 4"), after: 3)
            }
            #expect(try await replayAll(current).map(\.1) == ["old 1", "old 2", "old 3", "new 4"])
            #expect(try await current.lastSequence() == 4)
            await oldOwner.close()
            await newOwner.close()
        }
    }

    @Test func anAcknowledgedAppendIsReplayableAfterTheStreamLeadersNATSNodeIsKilled() async throws {
        try await withCluster { cluster in
            let writer = try await connectClient(to: cluster, first: 0, name: "writer")
            let partition = PartitionID(space: .boards, index: 9)
            let journal = try await PartitionJournal.create(partition, in: JetStream(connection: writer, timeoutMilliseconds: 2_000))
            var last: UInt64 = 0
            var acknowledged: [String] = []
            func appendUntilAcknowledged(_ text: String) async throws {
                let deadline = Date().addingTimeInterval(30)
                var lastError: Error?
                while Date() < deadline {
                    do {
                        last = try await journal.append(record(text), after: last, messageID: "writer:\(partition):\(text)")
                        acknowledged.append(text)
                        return
                    } catch {
                        lastError = error
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                throw HarnessError("\(text) not acknowledged; last error: \(lastError.map { "\($0)" } ?? "none")")
            }
            for index in 1...20 { try await appendUntilAcknowledged("r\(index)") }

            let leaderName = try #require(try await JetStream(connection: writer).streamInfo(journal.streamName).leader)
            let leader = try #require(cluster.nodes.firstIndex { $0.name == leaderName })
            cluster.kill(leader)
            for index in 21...30 { try await appendUntilAcknowledged("r\(index)") }

            let survivor = (leader + 1) % cluster.nodes.count
            let reader = try await connectClient(to: cluster, first: survivor, name: "reader")
            // Right after the kill a replay may time out while the stream elects a leader; a
            // recovering owner retries, and so does this.
            var replayed: [(UInt64, String)] = []
            try await eventually(timeoutSeconds: 30, "a replay after the kill") {
                replayed = try await replayAll(PartitionJournal(partition: partition, jetStream: JetStream(connection: reader)))
                return true
            }
            #expect(replayed.map(\.1) == acknowledged, "the replay differs from what was acknowledged")
            #expect(replayed.map(\.0) == Array(1...UInt64(acknowledged.count)))
            await writer.close()
            await reader.close()
        }
    }

    @Test func recoveryIsTheLatestSnapshotPlusTheRecordsAfterIt() async throws {
        try await withSharedCluster { cluster in
            let partition = PartitionID(space: .accounts, index: 2)
            let (client, jetStream, journal) = try await ownerJournal(cluster, partition)
            #expect(journal.streamName == "BB_A2" && journal.subject == "bb.journal.a2")
            let snapshots = try await SnapshotStore.create(in: jetStream)
            #expect(try await snapshots.latest(of: partition) == nil)
            var last: UInt64 = 0
            for index in 1...5 { last = try await journal.append(record("r\(index)"), after: last) }
            try await snapshots.save(PartitionSnapshot(partition: partition, sequence: 5, state: record("state after 5")))
            for index in 6...8 { last = try await journal.append(record("r\(index)"), after: last) }

            func recover() async throws -> (state: String?, records: [String], at: UInt64) {
                var state: String?
                var records: [String] = []
                let at = try await journal.recover(from: snapshots, restore: { snapshot, _ in state = snapshot.map { String(decoding: $0.state, as: UTF8.self) } },
                                                   apply: { _, bytes in records.append(String(decoding: bytes, as: UTF8.self)) })
                return (state, records, at.record)
            }
            var recovered = try await recover()
            #expect(recovered.state == "state after 5")
            #expect(recovered.records == ["r6", "r7", "r8"])
            #expect(recovered.at == 8)

            // Purged up to the snapshot: the same state comes back.
            try await journal.purge(through: 5)
            recovered = try await recover()
            #expect(recovered.records == ["r6", "r7", "r8"] && recovered.at == 8)
            // But a replay from before the purge is refused, not silently short.
            await #expect(throws: JournalError.missingRecords(partition, from: 1, through: 5)) {
                _ = try await journal.replay(after: 0) { _, _ in }
            }

            // A snapshot that is not this partition's is refused.
            _ = try await snapshots.objects.put(partition.description,
                                                PartitionSnapshot(partition: PartitionID(space: .boards, index: 2),
                                                                  sequence: 1, state: []).encoded())
            await #expect(throws: JournalError.self) { _ = try await snapshots.latest(of: partition) }
            _ = try await snapshots.objects.put(partition.description, record("not a snapshot"))
            await #expect(throws: JournalError.self) { _ = try await snapshots.latest(of: partition) }
            await client.close()
        }
    }

    /// What a node taking a partition over right after a NATS server died relies on: opening the
    /// journal and the snapshot store and recovering from them asks only their streams' leaders.
    /// With two of three servers gone the meta group has no leader (a consumer cannot be made),
    /// and recovery from streams kept on the surviving server still works, records in order.
    @Test func recoveryNeedsOnlyTheStreamsLeadersNotTheMetaLeader() async throws {
        try await withCluster { cluster in
            let partition = PartitionID(space: .boards, index: 9)
            let (client, jetStream, journal) = try await ownerJournal(cluster, partition, replicas: 1)
            let home = try #require(try await jetStream.streamInfo(journal.streamName).leader)
            // The meta leader places a one-replica stream where it likes: make the snapshot
            // bucket's again until it lands beside the journal.
            var snapshots = try await SnapshotStore.create(in: jetStream, replicas: 1)
            for _ in 0..<40 where try await jetStream.streamInfo(snapshots.objects.streamName).leader != home {
                try await jetStream.deleteStream(snapshots.objects.streamName)
                snapshots = try await SnapshotStore.create(in: jetStream, replicas: 1)
            }
            try #require(try await jetStream.streamInfo(snapshots.objects.streamName).leader == home)
            var last: UInt64 = 0
            for index in 1...4 { last = try await journal.append(record("r\(index)"), after: last) }
            try await snapshots.save(PartitionSnapshot(partition: partition, sequence: 4, state: record("state after 4")))
            for index in 5...600 { last = try await journal.append(record("r\(index)"), after: last) }
            await client.close()

            let survivor = try #require(cluster.nodes.firstIndex { $0.name == home })
            for index in cluster.nodes.indices where index != survivor { cluster.kill(index) }
            let taker = try await connectClient(to: cluster, first: survivor, name: "taker")
            let takerStream = JetStream(connection: taker, timeoutMilliseconds: 2_000)
            await #expect(throws: NATSClientError.self, "a consumer could be made: the meta group still has a leader") {
                _ = try await takerStream.reader(of: journal.streamName).next()
            }
            let reopened = try await PartitionJournal.create(partition, in: takerStream, replicas: 1)
            let reopenedSnapshots = try await SnapshotStore.create(in: takerStream, replicas: 1)
            var state: String?
            var records: [(UInt64, String)] = []
            let end = try await reopened.recover(from: reopenedSnapshots, restore: { snapshot, _ in state = snapshot.map { String(decoding: $0.state, as: UTF8.self) } },
                                                 apply: { records.append(($0, String(decoding: $1, as: UTF8.self))) })
            #expect(state == "state after 4")
            #expect(end == JournalEnd(message: 600, record: 600))
            #expect(records.map(\.0) == Array(5...600))
            #expect(records.map(\.1) == (5...600).map { "r\($0)" })
            await taker.close()
        }
    }

    /// Opening a journal finds the stream as it is (records kept), and one kept on fewer servers
    /// than asked is given the replicas asked for: a deployment that grew from one NATS server.
    @Test func openingAJournalKeepsItsRecordsAndGrowsItsReplicas() async throws {
        try await withSharedCluster { cluster in
            let partition = PartitionID(space: .boards, index: 11)
            let (client, jetStream, small) = try await ownerJournal(cluster, partition, replicas: 1)
            var last: UInt64 = 0
            for index in 1...3 { last = try await small.append(record("r\(index)"), after: last) }
            #expect(try await jetStream.streamInfo(small.streamName).configuration.replicas == 1)

            let grown = try await PartitionJournal.create(partition, in: jetStream, replicas: 3)
            let info = try await jetStream.streamInfo(grown.streamName)
            #expect(info.configuration.replicas == 3)
            #expect(info.configuration.deniesDelete && info.configuration.discard == .new, "the rest of its configuration kept")
            // The first read right after the stream grew can go unanswered while it places its new
            // replicas (here it timed out after 5 s, the next was answered at once); a take-over
            // retries its recovery the same way.
            try await eventually(timeoutSeconds: 30, "the grown journal to replay") {
                try await self.replayAll(grown).map(\.1) == ["r1", "r2", "r3"]
            }
            // Asking for fewer replicas than it has changes nothing.
            _ = try await PartitionJournal.create(partition, in: jetStream, replicas: 1)
            #expect(try await jetStream.streamInfo(grown.streamName).configuration.replicas == 3)
            await client.close()
        }
    }

    @Test func aSnapshotRoundTripsItsHeaderAndRefusesAnotherPartitionsOrFormat() throws {
        let partition = PartitionID(space: .boards, index: 63)
        let snapshot = PartitionSnapshot(partition: partition, sequence: 0x0102_0304_0506_0708, state: [9, 8, 7])
        #expect(try PartitionSnapshot(decoding: snapshot.encoded(), of: partition) == snapshot)
        #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: snapshot.encoded(), of: PartitionID(space: .boards, index: 6)) }
        var otherVersion = snapshot.encoded()
        otherVersion[4] = 3
        #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: otherVersion, of: partition) }
        #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: Array(snapshot.encoded().prefix(10)), of: partition) }
    }

    /// With an outbox or an inbox reader beside the state, format 2; without, format 1 as before
    /// the inbox, so nodes from then read it. Every cut of a sectioned snapshot is refused.
    @Test func aSnapshotCarriesItsInboxSectionsAndRefusesThemCutOrDoubled() throws {
        let partition = PartitionID(space: .accounts, index: 3)
        let plain = PartitionSnapshot(partition: partition, sequence: 9, state: [1, 2])
        #expect(plain.encoded()[4] == 1)
        #expect(Array(plain.encoded().suffix(2)) == [1, 2])
        for snapshot in [PartitionSnapshot(partition: partition, sequence: 9, state: [1, 2], outbox: [3], inbox: []),
                         PartitionSnapshot(partition: partition, sequence: 9, state: [], outbox: nil, inbox: Array(repeating: 7, count: 300)),
                         PartitionSnapshot(partition: partition, sequence: 9, state: [5], outbox: [4, 4], inbox: nil)] {
            let bytes = snapshot.encoded()
            #expect(bytes[4] == 2)
            #expect(try PartitionSnapshot(decoding: bytes, of: partition) == snapshot)
            for length in 0..<bytes.count {
                #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: Array(bytes.prefix(length)), of: partition) }
            }
            #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: bytes + [0], of: partition) }
        }
        // The outbox's section twice (the count says three sections: state, outbox, outbox).
        var doubled = PartitionSnapshot(partition: partition, sequence: 9, state: [1], outbox: [3]).encoded()
        doubled[6 + 2 + 8] = 3
        doubled += [1, 0, 0, 0, 1, 3]
        #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: doubled, of: partition) }
        // No state section.
        var stateless = PartitionSnapshot(partition: partition, sequence: 9, state: [], outbox: [3]).encoded()
        stateless[6 + 2 + 8 + 1] = 2
        #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: stateless, of: partition) }
    }

    /// Damaged sectioned snapshots never trap: each is refused, or read as a snapshot that
    /// encodes back to exactly the bytes read.
    @Test func aDamagedSectionedSnapshotIsRefusedOrReadExactly() throws {
        let partition = PartitionID(space: .accounts, index: 1)
        let bytes = PartitionSnapshot(partition: partition, sequence: 77, state: Array(repeating: 5, count: 40),
                                      outbox: Array(repeating: 6, count: 20), inbox: [7, 8, 9]).encoded()
        var random = SeededGenerator(seed: 16)
        var refused = 0
        for _ in 0..<5_000 {
            let damaged = random.damaged(bytes)
            do {
                let read = try PartitionSnapshot(decoding: damaged, of: partition)
                #expect(read.encoded() == damaged || (read.outbox == nil && read.inbox == nil && damaged[4] == 2))
            } catch {
                refused += 1
            }
        }
        #expect(refused > 1_000, "only \(refused) refused")
    }
}

/// A client of `cluster` named "owner", its JetStream, and the journal of `partition` made through it.
func ownerJournal(_ cluster: NATSCluster, _ partition: PartitionID,
                  replicas: Int = 3) async throws -> (NATSConnection, JetStream, PartitionJournal) {
    let client = try await connectClient(to: cluster, name: "owner")
    let jetStream = JetStream(connection: client)
    return (client, jetStream, try await PartitionJournal.create(partition, in: jetStream, replicas: replicas))
}
