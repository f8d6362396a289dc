import Foundation
import NATSClient
import NATSTestSupport
import Synchronization
import Testing

/// KV buckets against a real 3-node cluster: the lease primitives.
@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct KeyValueTests {
    @Test func getPutCreateUpdateAndDelete() async throws {
        try await withSharedCluster { cluster in
            let client = try await connectClient(to: cluster)
            let bucket = try await KeyValueBucket.create("leases", in: JetStream(connection: client),
                                                         configuration: .init(history: 5, replicas: 3))
            #expect(try await bucket.get("p1") == nil)
            let created = try await bucket.create("p1", Array("node-a".utf8))
            do {
                let error = try #require(await jetStreamError { try await bucket.create("p1", Array("node-b".utf8)) }, "create over an existing key succeeded")
                #expect(error.isWrongLastSequence)
            }
            let entry = try #require(try await bucket.get("p1"))
            #expect(entry.value == Array("node-a".utf8))
            #expect(entry.revision == created)
            let renewed = try await bucket.update("p1", Array("node-a".utf8), revision: created)
            #expect(renewed > created)
            do {
                let error = try #require(await jetStreamError { try await bucket.update("p1", Array("node-b".utf8), revision: created) }, "an update from a stale revision succeeded")
                #expect(error.isWrongLastSequence)
            }
            do {
                let error = try #require(await jetStreamError { try await bucket.delete("p1", revision: created) }, "a delete from a stale revision succeeded")
                #expect(error.isWrongLastSequence)
            }
            try await bucket.delete("p1", revision: renewed)
            #expect(try await bucket.get("p1") == nil)
            // A deleted key can be created again.
            let again = try await bucket.create("p1", Array("node-b".utf8))
            #expect(try await bucket.get("p1")?.revision == again)
            let plain = try await bucket.put("p2", [7])
            #expect(try await bucket.get("p2")?.revision == plain)
            await #expect(throws: NATSClientError.self) { try await bucket.put("bad key", []) }
            await #expect(throws: NATSClientError.self) { try await bucket.put("a..b", []) }
            await client.close()
        }
    }

    @Test func ofTwoClientsRacingForAKeyExactlyOneWins() async throws {
        try await withSharedCluster { cluster in
            let first = try await connectClient(to: cluster, first: 0, name: "node-a")
            let second = try await connectClient(to: cluster, first: 2, name: "node-b")
            let bucketA = try await KeyValueBucket.create("race", in: JetStream(connection: first), configuration: .init(replicas: 3))
            let bucketB = try await KeyValueBucket.open("race", in: JetStream(connection: second))
            for round in 0..<20 {
                let key = "partition-\(round)"
                // Taking an absent lease: both create.
                async let a = attempt { () async throws(NATSClientError) in try await bucketA.create(key, [1]) }
                async let b = attempt { () async throws(NATSClientError) in try await bucketB.create(key, [2]) }
                let created = await [a, b]
                #expect(created.compactMap { try? $0.get() }.count == 1, "round \(round): create")
                for case .failure(let error) in created { #expect(error.jetStreamCode == JetStreamError.wrongLastSequence) }
                // Taking over from the same revision: both update.
                let revision = try #require(try await bucketA.get(key)).revision
                async let c = attempt { () async throws(NATSClientError) in try await bucketA.update(key, [3], revision: revision) }
                async let d = attempt { () async throws(NATSClientError) in try await bucketB.update(key, [4], revision: revision) }
                let updated = await [c, d]
                let winners = updated.enumerated().compactMap { index, outcome in (try? outcome.get()).map { (index, $0) } }
                #expect(winners.count == 1, "round \(round): update")
                for case .failure(let error) in updated { #expect(error.jetStreamCode == JetStreamError.wrongLastSequence) }
                let value = try #require(try await bucketB.get(key))
                let winner = try #require(winners.first)
                #expect(value.revision == winner.1)
                #expect(value.value == (winner.0 == 0 ? [3] : [4]))
            }
            await first.close()
            await second.close()
        }
    }

    @Test func aWatchSeesTheCurrentValueThenEveryChangeInOrder() async throws {
        try await withSharedCluster { cluster in
            let watcher = try await connectClient(to: cluster, first: 1, name: "watcher")
            let writer = try await connectClient(to: cluster, first: 0, name: "writer")
            // History 10: with 1, a value replaced before its delivery is skipped (the watch delivers its successor).
            let bucket = try await KeyValueBucket.create("watched", in: JetStream(connection: writer),
                                                         configuration: .init(history: 10, replicas: 3))
            let initial = try await bucket.put("p7", Array("a".utf8))
            let watch = try await KeyValueBucket.open("watched", in: JetStream(connection: watcher)).watch("p7")
            let seen = Mutex<[KeyValueEntry]>([])
            let follower = Task {
                for await entry in watch.updates { seen.withLock { $0.append(entry) } }
            }
            // The first entry is the current value; writes after it follow.
            try await eventually("the current value") { seen.withLock { $0.count == 1 } }
            let second = try await bucket.update("p7", Array("b".utf8), revision: initial)
            _ = try await bucket.put("other", Array("x".utf8))
            let third = try await bucket.put("p7", Array("c".utf8))
            let deleted = try await bucket.delete("p7")
            try await eventually("four entries") { seen.withLock { $0.count >= 4 } }
            let entries = seen.withLock { $0 }
            watch.stop()
            await follower.value
            #expect(entries.map(\.revision) == [initial, second, third, deleted])
            #expect(entries.map { String(decoding: $0.value, as: UTF8.self) } == ["a", "b", "c", ""])
            #expect(entries.map(\.operation) == [.put, .put, .put, .delete])
            #expect(entries.allSatisfy { $0.key == "p7" && $0.bucket == "watched" })
            await watcher.close()
            await writer.close()
        }
    }
}

extension NATSClientError {
    var jetStreamCode: Int? {
        if case .jetStream(let error) = self { return error.errorCode }
        return nil
    }
}

func attempt<Value>(_ body: () async throws(NATSClientError) -> Value) async -> Result<Value, NATSClientError> {
    do throws(NATSClientError) {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
