import NATSClient
import NATSTestSupport
import Testing

/// The object store against a real 3-node cluster: where snapshots will go.
@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct ObjectStoreTests {
    /// Bytes that do not compress or repeat, from a fixed seed (xorshift).
    private func blob(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    @Test func aBlobOfSeveralMebibytesComesBackWholeAndAReplacementReplacesIt() async throws {
        try await withSharedCluster { cluster in
            let client = try await connectClient(to: cluster)
            let jetStream = JetStream(connection: client)
            let store = try await ObjectStore.create("snapshots", in: jetStream, replicas: 3)
            #expect(try await store.get("p1") == nil)
            let data = blob(count: 3 * 1024 * 1024 + 12_345, seed: 42)
            let info = try await store.put("p1", data)
            #expect(info.size == data.count)
            #expect(info.chunks == (data.count + ObjectStore.defaultChunkSize - 1) / ObjectStore.defaultChunkSize)
            #expect(try await store.get("p1") == data)

            let smaller = blob(count: 300_000, seed: 7)
            let replaced = try await store.put("p1", smaller, chunkSize: 64 * 1024)
            #expect(replaced.nuid != info.nuid)
            #expect(try await store.get("p1") == smaller)
            // The old version's chunks are purged: the stream holds the new chunks and one record.
            #expect(try await jetStream.streamInfo("OBJ_snapshots").messages == UInt64(replaced.chunks + 1))

            let empty = try await store.put("empty", [])
            #expect(empty.chunks == 0)
            #expect(try await store.get("empty") == [])

            try await store.delete("p1")
            #expect(try await store.get("p1") == nil)
            #expect(try await store.info("p1")?.isDeleted == true)
            await client.close()
        }
    }
}
