// The shared history of a cluster against a real nats-server: the owner's archiver publishes each
// batch to the history stream before storing it, so a closed order leaves memory only once the
// stream has it; a follower fills another node's archive from the stream; the next owner, on that
// archive, has the order in its history though no snapshot or record of the partition holds it.
import BangbangCore
import Foundation
import NATSClient
import NATSTestSupport
import OrderArchive
import Testing
@testable import BangbangServer

@Suite(.serialized, .timeLimit(.minutes(2))) struct HistoryStreamTests {
    static let day: Int64 = 86_400_000

    func storage(_ journal: MemoryStream, archive: OrderArchive? = nil, history: HistoryStream) -> ClusterStorage {
        let (recovered, last) = journal.recovered()
        return ClusterStorage(recovered: recovered, sessionSecret: ApplicationOnAnotherJournalTests.secret,
                              archive: archive, history: history) { queue in
            MemoryJournal(stream: journal, after: last, queue: queue)
        }
    }

    func completedOrder(_ harness: ApplicationHarness, phones: (String, String)) async throws -> OrderID {
        let publisher = try await harness.logIn(phones.0)
        let runner = try await harness.logIn(phones.1)
        let id = try await harness.publish(Drafts.express(now: harness.clock.now), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: id, by: runner)
        try await harness.run(.pickUp, on: id, by: runner)
        try await harness.run(.deliver(code: nil), on: id, by: runner)
        try await harness.run(.confirm, on: id, by: publisher)
        return id
    }

    func newArchive() throws -> OrderArchive {
        try OrderArchive(path: try makeTemporaryDirectory("bangbang-follower") + "/archive.sqlite")
    }

    @Test func aClosedOrderIsInTheHistoryStreamBeforeItLeavesMemoryAndTheNextOwnerHasIt() async throws {
        let nats = try await NATSCluster.start(size: 1)
        defer { nats.stop() }
        let connection = try await connectClient(to: nats, name: "owner")
        let jetStream = JetStream(connection: connection)
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

    @Test func anOrderStaysInMemoryWhileTheHistoryStreamCannotTakeIt() async throws {
        let nats = try await NATSCluster.start(size: 1)
        defer { nats.stop() }
        let connection = try await connectClient(to: nats, name: "owner")
        let jetStream = JetStream(connection: connection)
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
