// Personal events between partitions over a real 3-node JetStream cluster: sources publish
// pipelined to two account partitions' inboxes while the NATS server leading one of them is
// killed, and a source's node is replaced by one restored from its snapshot; reading each inbox
// in order applies every event once, in its source's journal order.
import Cluster
import Foundation
import InboxProtocol
import NATSClient
import NATSTestSupport
import Synchronization
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(3))) struct InboxSenderIntegrationTests {
    static let partitions = [PartitionID(space: .accounts, index: 0), PartitionID(space: .accounts, index: 1)]

    /// Record `sequence` of `source`: one event for a user of each partition it names.
    static func record(_ source: InboxSource, _ sequence: UInt64) -> [(destination: UInt16, events: [InboxEvent])] {
        let destinations: [UInt16] = sequence % 3 == 0 ? [0] : sequence % 3 == 1 ? [1] : [0, 1]
        return destinations.map { destination in
            (destination, [InboxEvent(user: UInt64(destination) + 2 * sequence, name: "order.changed",
                                      data: Array("\(source)#\(sequence)".utf8))])
        }
    }

    /// Everything the reader applies from `inbox`, per source: (journal sequence, event data).
    static func applied(_ inbox: PartitionInbox) async throws -> (applied: [InboxSource: [UInt64]], copies: Int, outOfOrder: Int) {
        var reader = InboxReader()
        var applied: [InboxSource: [UInt64]] = [:]
        var copies = 0, outOfOrder = 0
        while true {
            let batch = try await inbox.read(after: reader.state.position)
            if batch.isEmpty { return (applied, copies, outOfOrder) }
            for stored in batch {
                let message = try stored.message.get()
                guard let outcome = reader.read(message, at: stored.sequence) else {
                    Issue.record("a message read twice")
                    continue
                }
                applied[message.source, default: []] += message.entries[outcome.applied].map(\.journalSequence)
                copies += outcome.duplicates
                outOfOrder += outcome.outOfOrder
            }
        }
    }

    static func expected(_ source: InboxSource, through last: UInt64, to destination: UInt16) -> [UInt64] {
        (1...last).filter { sequence in record(source, sequence).contains { $0.destination == destination } }
    }

    @Test func everyEventArrivesOnceInOrderThroughTheLossOfAnInboxsLeader() async throws {
        try await withCluster { cluster in
            let admin = try await connectClient(to: cluster, first: 0, name: "admin")
            var inboxes: [PartitionInbox] = []
            for partition in Self.partitions {
                inboxes.append(try await PartitionInbox.create(partition, in: JetStream(connection: admin)))
            }
            let sources = [InboxSource(space: .boards, index: 4), InboxSource(space: .boards, index: 7)]
            let leaderName = try #require(try await JetStream(connection: admin).streamInfo(inboxes[0].streamName).leader)
            let leader = try #require(cluster.nodes.firstIndex { $0.name == leaderName })
            let survivor = (leader + 1) % cluster.nodes.count
            var senders: [InboxSender] = []
            let failures = Atomic<Int>(0)
            // One source talks to a server that stays, the other to the one that dies (its
            // connection moves to a survivor).
            for (source, server) in zip(sources, [survivor, leader]) {
                let connection = try await connectClient(to: cluster, first: server, name: "source-\(source)")
                senders.append(InboxSender(jetStream: JetStream(connection: connection), outbox: InboxOutbox(source: source),
                                           onFailure: { _, _ in failures.add(1, ordering: .relaxed) }))
            }
            let records: UInt64 = 1_500
            for sequence in 1...records {
                for (sender, source) in zip(senders, sources) {
                    sender.send(journalSequence: sequence, at: 1_796_099_188_971, eventsByDestination: Self.record(source, sequence))
                }
                if sequence == records / 3 { cluster.kill(leader) }
                if sequence % 100 == 0 { try await Task.sleep(for: .milliseconds(20)) }
            }
            try await eventually(timeoutSeconds: 60, "every message delivered") {
                senders.allSatisfy { $0.undeliveredCount == 0 }
            }
            let reading = try await connectClient(to: cluster, first: survivor, name: "account-owner")
            for (destination, partition) in Self.partitions.enumerated() {
                let (applied, copies, outOfOrder) = try await Self.applied(PartitionInbox(partition: partition, jetStream: JetStream(connection: reading)))
                for source in sources {
                    #expect(applied[source] == Self.expected(source, through: records, to: UInt16(destination)),
                            "\(source) → \(partition)")
                }
                print("inbox \(partition): \(copies) copies and \(outOfOrder) out-of-order entries dropped")
            }
            print("publishes failed and sent again: \(failures.load(ordering: .relaxed))")
            #expect(failures.load(ordering: .relaxed) > 0, "the kill failed no publish: the test did not test the loss")
        }
    }

    @Test func aSourceTakenOverFromItsSnapshotSendsWhatWasUndeliveredAndNothingTwice() async throws {
        try await withSharedCluster { cluster in
            let admin = try await connectClient(to: cluster, first: 0, name: "admin")
            for partition in Self.partitions {
                _ = try await PartitionInbox.create(partition, in: JetStream(connection: admin))
            }
            let source = InboxSource(space: .boards, index: 2)
            let first = try await connectClient(to: cluster, first: 1, name: "first-owner")
            let old = InboxSender(jetStream: JetStream(connection: first), outbox: InboxOutbox(source: source))
            for sequence in UInt64(1)...300 { old.send(journalSequence: sequence, at: 1_796_099_188_971, eventsByDestination: Self.record(source, sequence)) }
            // The snapshot's cut at record 300, taken while publishes are still in flight.
            let state = Mutex<InboxOutbox.State?>(nil)
            old.state { cut in state.withLock { $0 = cut } }
            for sequence in UInt64(301)...400 { old.send(journalSequence: sequence, at: 1_796_099_188_971, eventsByDestination: Self.record(source, sequence)) }
            try await eventually(timeoutSeconds: 10, "the snapshot's outbox state") { state.withLock { $0 } != nil }
            await first.close()
            let snapshot = try #require(state.withLock { $0 })
            let restored = try InboxStateCodec.decodeOutbox(InboxStateCodec.encode(snapshot)[...])

            let second = try await connectClient(to: cluster, first: 2, name: "next-owner")
            let next = InboxSender(jetStream: JetStream(connection: second), outbox: InboxOutbox(source: source, state: restored))
            for sequence in UInt64(301)...500 { next.send(journalSequence: sequence, at: 1_796_099_188_971, eventsByDestination: Self.record(source, sequence)) }
            try await eventually(timeoutSeconds: 30, "every message delivered") { next.undeliveredCount == 0 }
            for (destination, partition) in Self.partitions.enumerated() {
                let (applied, copies, _) = try await Self.applied(PartitionInbox(partition: partition, jetStream: JetStream(connection: second)))
                #expect(applied[source] == Self.expected(source, through: 500, to: UInt16(destination)), "\(partition)")
                #expect(copies > 0, "the next owner sent again what the first had sent after its snapshot")
            }
        }
    }

    /// Records handed over one at a time, each in a turn of its own, while a message is
    /// unanswered: one message per partition is on the wire at a time, and what arrives meanwhile
    /// goes out together. The NATS server the sender talks to is frozen while they arrive, so the
    /// inbox holds exactly three messages (the first record, the one sent into the freeze, all
    /// the rest; one per record without the window), with every event applied once, in order.
    @Test func recordsThatArriveWhileAMessageIsUnansweredGoOutTogether() async throws {
        try await withCluster { cluster in
            let connection = try await connectClient(to: cluster, first: 0, name: "source")
            let jetStream = JetStream(connection: connection)
            let inbox = try await PartitionInbox.create(Self.partitions[0], in: jetStream)
            let source = InboxSource(space: .boards, index: 3)
            let sender = InboxSender(jetStream: jetStream, outbox: InboxOutbox(source: source))
            let records = UInt64(40)
            func send(_ sequence: UInt64) {
                sender.send(journalSequence: sequence, at: 1_796_099_188_971, eventsByDestination: [
                    (0, [InboxEvent(user: 2 * sequence, name: "order.changed", data: Array("#\(sequence)".utf8))]),
                ])
            }
            send(1)
            try await eventually(timeoutSeconds: 20, "the first record delivered") { sender.undeliveredCount == 0 }
            cluster.freeze(0)
            for sequence in 2...records {
                send(sequence)
                // Each record a turn of the loop of its own: without the window, a message each.
                try await Task.sleep(for: .milliseconds(2))
            }
            cluster.thaw(0)
            try await eventually(timeoutSeconds: 20, "every record delivered") { sender.undeliveredCount == 0 }
            let messages = try await jetStream.streamInfo(inbox.streamName).lastSequence
            #expect(messages == 3, "\(messages) messages for \(records) records")
            let (applied, copies, outOfOrder) = try await Self.applied(inbox)
            #expect(applied[source] == Array(1...records) && copies == 0 && outOfOrder == 0)
        }
    }

    /// Messages as large as the codec allows are stored and read back: `STREAM.MSG.GET` answers
    /// with the message in base64 inside JSON, and that answer must fit one NATS message too.
    /// (With 1 MiB messages every read of a full one timed out.)
    @Test func fullMessagesAreReadBack() async throws {
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "full")
            let jetStream = JetStream(connection: connection)
            let inbox = try await PartitionInbox.create(Self.partitions[0], in: jetStream)
            let event = InboxEvent(user: 7, name: "order.changed", data: Array(repeating: UInt8(ascii: "x"), count: 2_000))
            let pending = (1...UInt64(400)).map { InboxEntry(outboxSequence: $0, journalSequence: $0, at: 0, events: [event]) }
            var outbox = InboxOutbox(source: InboxSource(space: .boards, index: 2),
                                     state: .init(destinations: [0: .init(nextSequence: 401, pending: pending)]))
            let publishes = outbox.publishes()
            #expect(publishes.count == 4)
            for publish in publishes {
                _ = try await jetStream.publish(inbox.subject, payload: InboxCodec.encode(publish.message))
            }
            let full = try #require(publishes.first).message
            #expect(InboxCodec.size(of: full) + InboxCodec.size(of: pending[0]) > InboxCodec.maxMessageBytes, "full")
            let (applied, copies, outOfOrder) = try await Self.applied(inbox)
            #expect(applied[InboxSource(space: .boards, index: 2)] == Array(1...400))
            #expect(copies == 0 && outOfOrder == 0)
            await connection.close()
        }
    }

    /// A measuring tool, not a test: `INBOX_BENCHMARK=50000 swift test -c release --build-path
    /// .build-rel -Xswiftc -enable-testing --filter InboxSenderIntegrationTests`. One source sends
    /// that many records' personal events (an order view of about 500 bytes for one or two users,
    /// in four account partitions) through an InboxSender to a 3-server cluster, R3; then the four
    /// inboxes are read in order by InboxReader. Prints the rates and this process's CPU per
    /// message sent; asserts only that every message was applied once.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["INBOX_BENCHMARK"] != nil))
    func measureSendingAndReading() async throws {
        let count = UInt64(ProcessInfo.processInfo.environment["INBOX_BENCHMARK"] ?? "") ?? 20_000
        try await withSharedCluster { cluster in
            let connection = try await connectClient(to: cluster, name: "benchmark")
            let jetStream = JetStream(connection: connection)
            let partitions = (0..<4).map { PartitionID(space: .accounts, index: $0) }
            for partition in partitions { _ = try await PartitionInbox.create(partition, in: jetStream) }
            let source = InboxSource(space: .boards, index: 0)
            let view = Array(repeating: UInt8(ascii: "x"), count: 500)
            let records = (1...count).map { sequence -> [(destination: UInt16, events: [InboxEvent])] in
                let first = UInt16(sequence % 4)
                let users = sequence % 3 == 0 ? [first] : [first, (first + 1) % 4]
                return users.map { ($0, [InboxEvent(user: UInt64($0) + 4 * sequence, name: "order.changed", data: view)]) }
            }
            let entries = records.reduce(0) { $0 + $1.count }
            let sender = InboxSender(jetStream: jetStream, outbox: InboxOutbox(source: source))
            let cpuBefore = Self.processCPU()
            var started = ContinuousClock.now
            for (offset, record) in records.enumerated() {
                sender.send(journalSequence: UInt64(offset + 1), at: 1_796_099_188_971, eventsByDestination: record)
                // A commit path hands events over as records become durable: bounded in flight.
                while sender.undeliveredCount > 4_096 { try await Task.sleep(for: .microseconds(200)) }
            }
            try await eventually(timeoutSeconds: 120, "every message delivered") { sender.undeliveredCount == 0 }
            let sending = ContinuousClock.now - started
            let cpu = Self.processCPU() - cpuBefore
            started = ContinuousClock.now
            var applied = 0
            var messages = 0
            for partition in partitions {
                var reader = InboxReader()
                let inbox = PartitionInbox(partition: partition, jetStream: jetStream)
                while true {
                    let batch = try await inbox.read(after: reader.state.position)
                    if batch.isEmpty { break }
                    messages += batch.count
                    for stored in batch { applied += reader.read(try stored.message.get(), at: stored.sequence)?.applied.count ?? 0 }
                }
            }
            let reading = ContinuousClock.now - started
            #expect(applied == entries)
            func rate(_ duration: Duration) -> Int {
                Int(Double(entries) / (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18))
            }
            let entrySize = InboxCodec.size(of: InboxEntry(outboxSequence: 1, journalSequence: 1, at: 0, events: records[0][0].events))
            print("InboxSenderIntegrationTests: \(count) records, \(entries) entries of about \(entrySize) bytes "
                  + "in \(messages) messages, R3: "
                  + "sent in \(sending) (\(rate(sending)) entries/s, \(Int(cpu * 1e6) / entries) µs of this process's CPU per entry), "
                  + "read and applied in \(reading) (\(rate(reading)) entries/s)")
            await connection.close()
        }
    }

    /// User plus system CPU time of this process, in seconds.
    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
