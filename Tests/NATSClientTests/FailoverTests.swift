import Foundation
import NATSClient
import NATSTestSupport
import Synchronization
import Testing

/// `kill -9` of the NATS node a client is connected to: the client moves to another node,
/// its subscriptions follow, and every acknowledged message is in the stream exactly once.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FailoverTests {
    /// Publishes with a message id until acknowledged (bounded): a timeout or a lost connection
    /// leaves it unknown whether the message was stored, and the id makes the retry safe.
    private func publishUntilAcknowledged(_ jetStream: JetStream, _ subject: String, payload: [UInt8], id: String,
                                          deadline: Date) async throws -> PublishAck {
        var lastError: Error?
        while Date() < deadline {
            do {
                return try await jetStream.publish(subject, payload: payload, options: PublishOptions(messageID: id))
            } catch {
                lastError = error
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        throw HarnessError("\(id) not acknowledged before the deadline; last error: \(lastError.map { "\($0)" } ?? "none")")
    }

    @Test func aClientKeepsWorkingThroughAnotherNodeAndNothingAcknowledgedIsLost() async throws {
        try await withCluster { cluster in
            let client = try await connectClient(to: cluster, first: 0, name: "writer")
            let observer = try await connectClient(to: cluster, first: 1, name: "observer")
            let jetStream = JetStream(connection: client, timeoutMilliseconds: 2_000)
            var configuration = StreamConfiguration(name: "ORDERS", subjects: ["orders.>"])
            configuration.replicas = 3
            _ = try await jetStream.createStream(configuration)

            let heard = Mutex<Set<String>>([])
            _ = try client.subscribe(to: "events.>") { message in
                heard.withLock { _ = $0.insert(String(decoding: message.payload, as: UTF8.self)) }
            }
            try await client.flush()

            let deadline = Date().addingTimeInterval(60)
            var acknowledged: [String: UInt64] = [:]
            for index in 0..<50 {
                let ack = try await publishUntilAcknowledged(jetStream, "orders.p\(index % 4)", payload: Array("m-\(index)".utf8),
                                                             id: "m-\(index)", deadline: deadline)
                acknowledged["m-\(index)"] = ack.sequence
            }
            let before = try #require(client.connectedServer)
            let victim = try #require(cluster.index(of: before))
            cluster.kill(victim)

            // Publishing goes on through a survivor (with retries while the stream elects a leader).
            for index in 50..<100 {
                let ack = try await publishUntilAcknowledged(jetStream, "orders.p\(index % 4)", payload: Array("m-\(index)".utf8),
                                                             id: "m-\(index)", deadline: deadline)
                acknowledged["m-\(index)"] = ack.sequence
            }
            #expect(client.reconnectCount >= 1)
            let now = try #require(client.connectedServer)
            #expect(cluster.index(of: now) != victim)

            // The subscription was re-made on the new node: events published anywhere reach it.
            try await eventually(timeoutSeconds: 20, "the resubscribed client hears events") {
                try observer.publish("events.probe", payload: Array("after-failover".utf8))
                try await observer.flush()
                return heard.withLock { $0.contains("after-failover") }
            }

            // Every acknowledged message is stored, once, at the sequence its ack named.
            let reader = JetStream(connection: observer).reader(of: "ORDERS")
            var stored: [String: [UInt64]] = [:]
            try await eventually(timeoutSeconds: 20, "the replay") {
                let batch = try await reader.next(maximum: 200)
                for message in batch { stored[String(decoding: message.payload, as: UTF8.self), default: []].append(message.sequence) }
                return await reader.isCaughtUp && stored.count >= acknowledged.count
            }
            await reader.close()
            #expect(stored.count == 100)
            for (id, sequence) in acknowledged { #expect(stored[id] == [sequence], "\(id)") }
            await client.close()
            await observer.close()
        }
    }

    @Test func aClientGivenOneServerFindsTheOthersInINFOWhenItDies() async throws {
        // With one server listed and the cluster's INFO naming the others, the client finds them.
        try await withCluster { cluster in
            var configuration = NATSConfiguration(servers: [cluster.addresses[2]], name: "single-url")
            configuration.reconnectWaitMilliseconds = 20
            configuration.maxReconnectWaitMilliseconds = 200
            let client = NATSConnection(configuration: configuration)
            try await client.connect()
            try await eventually("INFO listing the cluster") { (client.serverInfo?.connectURLs.count ?? 0) >= 2 }
            cluster.kill(2)
            try await eventually(timeoutSeconds: 20, "a reconnect to a survivor") {
                client.isConnected && client.reconnectCount >= 1
            }
            // JetStream answers through the survivor once the meta layer has a leader again.
            try await eventually(timeoutSeconds: 20, "JetStream through a survivor") {
                _ = try await JetStream(connection: client, timeoutMilliseconds: 2_000).accountInfo()
                return true
            }
            #expect(cluster.index(of: try #require(client.connectedServer)) != 2)
            await client.close()
        }
    }

    @Test func aClientToldNotToUseAnnouncedServersWaitsForItsOwn() async throws {
        try await withCluster { cluster in
            var configuration = NATSConfiguration(servers: [cluster.addresses[0]], name: "own-servers-only")
            (configuration.reconnectWaitMilliseconds, configuration.maxReconnectWaitMilliseconds) = (20, 100)
            configuration.usesAnnouncedServers = false
            let client = NATSConnection(configuration: configuration)
            try await client.connect()
            try await eventually("INFO listing the cluster") { (client.serverInfo?.connectURLs.count ?? 0) >= 2 }
            cluster.kill(0)
            try await Task.sleep(for: .milliseconds(600))
            #expect(!client.isConnected, "no reconnect to a server it was not given")
            try cluster.relaunch(0)
            try await eventually(timeoutSeconds: 20, "back on its own server") { client.isConnected && client.reconnectCount >= 1 }
            #expect(cluster.index(of: try #require(client.connectedServer)) == 0)
            await client.close()
        }
    }
}
