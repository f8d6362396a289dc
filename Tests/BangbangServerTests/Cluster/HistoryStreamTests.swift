// The shared history of a cluster against a real nats-server: the owner's archiver publishes each
// batch to the history stream before storing it, so a closed order leaves memory only once the
// stream has it; a follower fills another node's archive from the stream; the next owner, on that
// archive, has the order in its history though no snapshot or record of the partition holds it.
import BangbangCore
import Foundation
import NATSClient
import NATSTestSupport
import OrderArchive
import Synchronization
import Testing
@testable import BangbangApplication
@testable import Cluster
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct HistoryStreamTests {
    static let day: Int64 = 86_400_000

    func storage(_ journal: MemoryStream, archive: OrderArchive? = nil, history: HistoryStream) -> ApplicationStorage {
        let (recovered, last) = journal.recovered()
        var storage = ApplicationStorage.journal(recovered: recovered, sessionSecret: ApplicationOnAnotherJournalTests.secret) { queue, _ in
            MemoryJournal(stream: journal, after: last, queue: queue)
        }
        storage.archive = archive
        storage.beforeArchiving = { records in try history.publishBlocking(records) }
        return storage
    }

    func completedOrder(_ harness: ApplicationHarness, phones: (String, String)) async throws -> OrderID {
        try await harness.completedOrder(publisher: try await harness.logIn(phones.0), runner: try await harness.logIn(phones.1))
    }

    /// A one-server NATS cluster, and a connection to it named "owner" with its JetStream.
    func ownerConnection() async throws -> (NATSCluster, NATSConnection, JetStream) {
        let nats = try await NATSCluster.shared(size: 1)
        do {
            let connection = try await connectClient(to: nats, name: "owner")
            return (nats, connection, JetStream(connection: connection))
        } catch {
            nats.stop()
            throw error
        }
    }

    func newArchive() throws -> OrderArchive {
        try OrderArchive(path: try makeTemporaryDirectory("bangbang-follower") + "/archive.sqlite")
    }

    @Test func aClosedOrderIsInTheHistoryStreamBeforeItLeavesMemoryAndTheNextOwnerHasIt() async throws {
        let (nats, connection, jetStream) = try await ownerConnection()
        defer { nats.stop() }
        let history = try await HistoryStream.open(in: jetStream, replicas: 1)
        let journal = MemoryStream()
        let first = try ApplicationHarness(cluster: storage(journal, history: history))
        let id = try await completedOrder(first, phones: ("+8613900008001", "+8613900008002"))
        let revision = try #require(await first.order(id)?.revision)
        try await first.eventually("the order is archived") { await first.archivedRevision(id) == revision }
        let published = try await jetStream.streamInfo(HistoryStream.streamName)
        #expect(published.messages >= 1, "archived without passing through the history stream")

        // Another node's archive, filled from the stream alone.
        let standbyArchive = try newArchive()
        let follower = HistoryFollower(stream: history, archive: standbyArchive, logger: Logger(level: .error, sink: { _ in }))
        #expect(try await follower.catchUp() == published.lastSequence)
        #expect(try standbyArchive.order(id: String(id.rawValue))?.revision == Int64(revision))
        #expect(try standbyArchive.followedPosition() == published.lastSequence)
        #expect(try await follower.catchUp() == published.lastSequence, "nothing new the second time")

        // Past its rating window the order leaves the owner's memory, recorded in the journal.
        first.clock.advance(milliseconds: 8 * Self.day)
        #expect(try await first.sweepArchive() == 1)
        #expect(await first.order(id) == nil)

        // The next owner recovers the partition without the order, and has it in its history.
        let second = try ApplicationHarness(cluster: storage(journal, archive: standbyArchive, history: history))
        #expect(await second.order(id) == nil)
        let archived = try #require(try second.app.archive.order(id: String(id.rawValue)))
        #expect(try Order(archived: archived).status == .completed)
        await connection.close()
    }

    /// A message on the history stream that is not a batch (or holds an order that does not
    /// decode) is logged and passed over; the batches around it are stored, and the archive's
    /// position moves past it, so it never holds back the history after it.
    @Test func anUnreadableMessageIsLoggedAndPassedOver() async throws {
        let (nats, connection, jetStream) = try await ownerConnection()
        defer { nats.stop() }
        let history = try await HistoryStream.open(in: jetStream, replicas: 1)
        let harness = try ApplicationHarness()
        let order = try #require(await harness.order(try await completedOrder(harness, phones: ("+8613900008031", "+8613900008032"))))
        _ = try await jetStream.publish(HistoryStream.subject, payload: Array("not a batch".utf8))
        _ = try await jetStream.publish(HistoryStream.subject, payload: HistoryBatch.encode([[1, 2, 3]])[0])
        try history.publishBlocking([ArchivedOrder(order)])
        let lines = Mutex<[String]>([])
        let archive = try newArchive()
        let follower = HistoryFollower(stream: history, archive: archive,
                                       logger: Logger(level: .info, sink: { line in lines.withLock { $0.append(line) } }))
        #expect(try await follower.catchUp() == 3)
        #expect(try archive.followedPosition() == 3)
        #expect(try archive.order(id: String(order.id.rawValue))?.revision == Int64(order.revision))
        #expect(lines.withLock { $0.filter { $0.contains("event=history_message_unreadable") }.count } == 2)
        await connection.close()
    }

    /// A measuring tool, not a test: `HISTORY_STREAM_BENCHMARK=20000 swift test --filter
    /// HistoryStreamTests` (a release build as HistoryBenchmark says, for real numbers). It times
    /// publishing that many closed orders in the archiver's batches of 512, and a node filling an
    /// empty archive from the stream; it asserts only that the archive holds every order.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["HISTORY_STREAM_BENCHMARK"] != nil))
    func measurePublishingAndFollowing() async throws {
        let count = Int(ProcessInfo.processInfo.environment["HISTORY_STREAM_BENCHMARK"] ?? "") ?? 20_000
        let nats = try await NATSCluster.shared(size: 3)
        defer { nats.stop() }
        let connection = try await connectClient(to: nats, name: "benchmark")
        let history = try await HistoryStream.open(in: JetStream(connection: connection), replicas: 3)
        let harness = try ApplicationHarness()
        let template = try #require(await harness.order(try await completedOrder(harness, phones: ("+8613900008021", "+8613900008022"))))
        let records = (1...count).map { serial in
            ArchivedOrder(Order(id: OrderID(shard: 0, serial: UInt64(serial)), publisher: template.publisher, campus: template.campus,
                                createdAt: template.createdAt, deadline: template.deadline, tip: template.tip, status: template.status,
                                runner: template.runner, acceptedAt: template.acceptedAt, autoConfirmAt: template.autoConfirmAt,
                                deliveryCode: template.deliveryCode, details: template.details, participants: template.participants,
                                timeline: template.timeline, cancellation: template.cancellation,
                                ratingByPublisher: template.ratingByPublisher, ratingByRunner: template.ratingByRunner,
                                revision: template.revision, searchText: template.searchText))
        }
        var started = ContinuousClock.now
        for batch in stride(from: 0, to: count, by: Archiver.batchLimit) {
            try history.publishBlocking(Array(records[batch..<min(count, batch + Archiver.batchLimit)]))
        }
        let publishing = ContinuousClock.now - started
        let archive = try newArchive()
        let follower = HistoryFollower(stream: history, archive: archive, logger: Logger(level: .error, sink: { _ in }))
        started = ContinuousClock.now
        _ = try await follower.catchUp()
        let following = ContinuousClock.now - started
        for serial in [1, count / 2, count] {
            #expect(try archive.order(id: String(OrderID(shard: 0, serial: UInt64(serial)).rawValue)) != nil)
        }
        let bytes = records.reduce(0) { $0 + $1.encoded.count } / count
        func rate(_ duration: Duration) -> Int { Int(Double(count) / (Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)) }
        print("HistoryStreamTests: \(count) orders of \(bytes) bytes, R3: published in \(publishing) (\(rate(publishing))/s), "
              + "followed into an empty archive in \(following) (\(rate(following))/s)")
        await connection.close()
    }

    @Test func anOrderStaysInMemoryWhileTheHistoryStreamCannotTakeIt() async throws {
        let (nats, connection, jetStream) = try await ownerConnection()
        defer { nats.stop() }
        // No stream yet: every publish is refused (no responders).
        let history = HistoryStream(jetStream: jetStream)
        let harness = try ApplicationHarness(cluster: storage(MemoryStream(), history: history))
        let id = try await completedOrder(harness, phones: ("+8613900008011", "+8613900008012"))
        try await harness.eventually("a batch has failed") { harness.app.archiver.backlog.failures > 0 }
        #expect(await harness.archivedRevision(id) == nil, "archived though the history stream refused it")
        #expect(try harness.app.archive.order(id: String(id.rawValue)) == nil)
        harness.clock.advance(milliseconds: 8 * Self.day)
        #expect(try await harness.sweepArchive() == 0, "an order left memory that the history does not hold")

        // Once the stream exists the archiver's retry gets it through.
        _ = try await HistoryStream.open(in: jetStream, replicas: 1)
        let revision = try #require(await harness.order(id)?.revision)
        try await harness.eventually("the order is archived after the retry") { await harness.archivedRevision(id) == revision }
        #expect(try await harness.sweepArchive() == 1)
        await connection.close()
    }
}
