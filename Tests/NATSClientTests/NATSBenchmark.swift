import Dispatch
import Foundation
import NATSClient
import NATSTestSupport
import Synchronization
import Testing

/// A measuring tool, not a test: run with
/// `NATS_BENCHMARK=1 swift test -c release --filter NATSBenchmark`.
/// Against one local nats-server it prints core publish throughput (to a subscriber on another
/// connection, counted there), request/reply round-trip latency, and acknowledged JetStream
/// publishes (file storage, one replica) one at a time and with 64 in flight.
@Suite(.serialized, .sharedNATSCluster) struct NATSBenchmark {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NATS_BENCHMARK"] != nil), .timeLimit(.minutes(3)))
    func measureThroughputAndLatency() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let publisher = try await connectClient(to: cluster, name: "bench-publisher")
            let subscriber = try await connectClient(to: cluster, name: "bench-subscriber")
            let clock = ContinuousClock()

            // Publish throughput: 128-byte messages, measured until the subscriber has them all.
            let count = 1_000_000
            let received = Atomic<Int>(0)
            _ = try subscriber.subscribe(to: "bench.pub", deliveringOn: DispatchQueue(label: "bench")) { _ in
                received.add(1, ordering: .relaxed)
            }
            try await subscriber.flush()
            let payload = [UInt8](repeating: 0x61, count: 128)
            let published = try await clock.measure {
                var sent = 0
                while sent < count {
                    do {
                        try publisher.publish("bench.pub", payload: payload)
                        sent += 1
                    } catch NATSClientError.outputBufferFull {
                        try await publisher.flush()
                    }
                }
                try await publisher.flush()
                try await eventually(timeoutSeconds: 60, "all messages") { received.load(ordering: .relaxed) == count }
            }
            let seconds = Double(published.components.seconds) + Double(published.components.attoseconds) / 1e18
            print("nats-benchmark publish: \(count) × 128 B in \(String(format: "%.2f", seconds)) s = \(Int(Double(count) / seconds)) msg/s delivered")

            // Request/reply latency: one request at a time, 20,000 of them.
            _ = try subscriber.subscribe(to: "bench.echo") { message in
                try? subscriber.publish(message.replyTo!, payload: Array(message.payload))
            }
            try await subscriber.flush()
            var latencies: [Double] = []
            latencies.reserveCapacity(20_000)
            for _ in 0..<20_000 {
                let elapsed = try await clock.measure { _ = try await publisher.request("bench.echo", payload: payload) }
                latencies.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
            }
            latencies.sort()
            func percentile(_ p: Double) -> String { String(format: "%.0f µs", latencies[Int(Double(latencies.count - 1) * p)]) }
            print("nats-benchmark request/reply: p50 \(percentile(0.5)), p99 \(percentile(0.99)), max \(percentile(1))")

            // Acknowledged JetStream publishes.
            let jetStream = JetStream(connection: publisher)
            _ = try await jetStream.createStream(StreamConfiguration(name: "BENCH", subjects: ["bench.js.>"]))
            let serial = 5_000
            let serialTime = try await clock.measure {
                for _ in 0..<serial { _ = try await jetStream.publish("bench.js.a", payload: payload) }
            }
            let windowed = 50_000
            let windowedTime = try await clock.measure {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<windowed {
                        if index >= 64 { try await group.next() }
                        group.addTask { _ = try await jetStream.publish("bench.js.b", payload: payload) }
                    }
                    try await group.waitForAll()
                }
            }
            func rate(_ n: Int, _ d: Duration) -> Int {
                Int(Double(n) / (Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18))
            }
            print("nats-benchmark jetstream publish+ack: one at a time \(rate(serial, serialTime))/s, 64 in flight \(rate(windowed, windowedTime))/s")
            #expect(try await jetStream.streamInfo("BENCH").messages == UInt64(serial + windowed))
            await publisher.close()
            await subscriber.close()
        }
    }
}
