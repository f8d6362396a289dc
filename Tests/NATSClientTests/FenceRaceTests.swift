import NATSClient
import NATSTestSupport
import Testing

/// The journal's fence under contention: of appends racing from the same expected last
/// sequence, exactly one is stored.
@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct FenceRaceTests {
    @Test func ofAppendsRacingFromTheSameSequenceExactlyOneIsStored() async throws {
        try await withSharedCluster { cluster in
            let clients = [try await connectClient(to: cluster, first: 0, name: "a"),
                           try await connectClient(to: cluster, first: 1, name: "b"),
                           try await connectClient(to: cluster, first: 2, name: "c")]
            var configuration = StreamConfiguration(name: "FENCE", subjects: ["fence.>"])
            configuration.replicas = 3
            _ = try await JetStream(connection: clients[0]).createStream(configuration)
            var last: UInt64 = 0
            for round in 0..<40 {
                let expected = last
                let outcomes = await withTaskGroup(of: Result<PublishAck, NATSClientError>.self) { group in
                    for (index, client) in clients.enumerated() {
                        group.addTask {
                            await attempt { () async throws(NATSClientError) in
                                try await JetStream(connection: client).publish("fence.p1", payload: [UInt8(index)],
                                                                                options: PublishOptions(expectedLastSequence: expected))
                            }
                        }
                    }
                    var outcomes: [Result<PublishAck, NATSClientError>] = []
                    for await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                let stored = outcomes.compactMap { try? $0.get() }
                #expect(stored.count == 1, "round \(round)")
                for case .failure(let error) in outcomes { #expect(error.jetStreamCode == JetStreamError.wrongLastSequence) }
                last = stored.map(\.sequence).max() ?? last
            }
            #expect(try await JetStream(connection: clients[0]).streamInfo("FENCE").lastSequence == last)
            for client in clients { await client.close() }
        }
    }
}
