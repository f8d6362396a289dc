// The application on a journal other than the data directory's, as a cluster node runs it: its
// commits go to that journal in sequence order, its snapshots too, and an application recovered
// from what that journal holds (snapshot + records after it) has every change, signs tokens with
// the secret it was given, and appends after the last record. The stream itself is faked here,
// in memory; Tests/ClusterServerTests run the real one.
import BangbangCore
import Dispatch
import Foundation
import Journal
import Synchronization
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

/// What a partition's stream would hold, in memory.
final class MemoryStream: Sendable {
    struct Contents {
        var records: [JournalRecord] = []
        var snapshot: (sequence: UInt64, bytes: [UInt8])?
    }
    let contents = Mutex(Contents())

    /// What a node taking the partition over recovers.
    func recovered() -> (RecoveredLog, last: UInt64) {
        contents.withLock { contents in
            let covered = contents.snapshot?.sequence ?? 0
            let log = RecoveredLog(snapshot: contents.snapshot?.bytes, snapshotSequence: covered,
                                   records: contents.records.filter { $0.sequence > covered })
            return (log, contents.records.last?.sequence ?? covered)
        }
    }
}

/// A CommitJournal appending to a MemoryStream, completing on the queue it was made with.
final class MemoryJournal: CommitJournal {
    let stream: MemoryStream
    let queue: DispatchQueue
    private let next: Mutex<UInt64>

    init(stream: MemoryStream, after last: UInt64, queue: DispatchQueue) {
        self.stream = stream
        self.queue = queue
        next = Mutex(last + 1)
    }

    func appendRecord(_ payload: [UInt8], completion: @escaping @Sendable (Result<UInt64, JournalError>) -> Void) {
        next.withLock { next in
            let sequence = next
            next += 1
            stream.contents.withLock { $0.records.append(JournalRecord(sequence: sequence, payload: payload)) }
            queue.async { completion(.success(sequence)) }
        }
    }

    var nextSequence: UInt64 { next.withLock { $0 } }
    var bytesAppended: Int { stream.contents.withLock { $0.records.reduce(0) { $0 + $1.payload.count } } }

    func storeSnapshot(_ contents: [UInt8], inboxStates: InboxStates, coveringThrough sequence: UInt64,
                       keepingRecordsAfter bound: UInt64) throws -> StoredSnapshot {
        stream.contents.withLock { $0.snapshot = (sequence, contents) }
        return StoredSnapshot(location: "memory", contentBytes: contents.count, storedBytes: contents.count, removed: [])
    }

    func readBackAll() throws -> RecoveredLog { stream.recovered().0 }
    func resumeAfterFailure() {}
    func close() throws {}
}

@Suite struct ApplicationOnAnotherJournalTests {
    static let secret = [UInt8](repeating: 7, count: 32)

    func storage(_ stream: MemoryStream) -> ApplicationStorage {
        let (recovered, last) = stream.recovered()
        return .journal(recovered: recovered, sessionSecret: Self.secret) { queue, _ in
            MemoryJournal(stream: stream, after: last, queue: queue)
        }
    }

    @Test func commitsGoToTheGivenJournalAndTheNextOwnerRecoversThemFromSnapshotAndRecords() async throws {
        let stream = MemoryStream()
        let first = try ApplicationHarness(cluster: storage(stream))
        #expect(first.configuration.isClustered)
        #expect(first.app.tokenSecret == Self.secret, "the cluster's secret, not the data directory's")
        #expect(!FileManager.default.fileExists(atPath: first.configuration.dataDirectory + "/session-secret"))
        let user = try await first.logIn("+8613900005001")
        let before = try await first.publish(Drafts.bounty(now: first.clock.now), by: user)
        #expect(try #require(first.snapshot()).sequence == 2)
        let after = try await first.publish(Drafts.express(now: first.clock.now), by: user)
        #expect(stream.contents.withLock { $0.records.map(\.sequence) } == [1, 2, 3])

        let second = try ApplicationHarness(cluster: storage(stream))
        #expect(await second.order(before)?.status == .open, "from the snapshot")
        #expect(await second.order(after)?.status == .open, "from the record after it")
        #expect(second.app.journal.nextSequence == 4)
        _ = try await second.publish(Drafts.bounty(now: second.clock.now), by: user)
        #expect(stream.contents.withLock { $0.records.map(\.sequence) } == [1, 2, 3, 4])
    }

    /// A single node's state imported into an empty partition: the application stores a snapshot
    /// of it before anything is appended, and the next owner recovers it from that alone.
    @Test func anImportedStateIsSnapshottedIntoTheEmptyStreamBeforeAnythingElse() async throws {
        let single = try ApplicationHarness()
        let user = try await single.logIn("+8613900005011")
        let order = try await single.publish(Drafts.bounty(now: single.clock.now), by: user)
        let local = try single.app.journal.readBackAll()
        #expect(local.records.count >= 2)

        let stream = MemoryStream()
        let last = stream.recovered().1
        var importing = ApplicationStorage.journal(recovered: local, sessionSecret: Self.secret) { queue, _ in
            MemoryJournal(stream: stream, after: last, queue: queue)
        }
        importing.isImport = true
        let importer = try ApplicationHarness(cluster: importing)
        let snapshot = try #require(stream.contents.withLock { $0.snapshot })
        #expect(snapshot.sequence == 0 && stream.contents.withLock { $0.records.isEmpty })
        #expect(await importer.order(order)?.status == .open)

        let next = try ApplicationHarness(cluster: storage(stream))
        #expect(await next.order(order)?.status == .open, "from the import's snapshot alone")
        #expect(next.app.journal.nextSequence == 1)
    }
}
