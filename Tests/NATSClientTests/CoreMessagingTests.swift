import Dispatch
import Foundation
import NATSClient
import NATSProtocol
import NATSTestSupport
import Synchronization
import Testing

/// Core NATS against real servers: publish/subscribe, request/reply, flush, headers.
@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(1))) struct CoreMessagingTests {
    @Test func publishedMessagesReachSubscribersOnAnyNodeInOrder() async throws {
        try await withSharedCluster { cluster in
            let publisher = try await connectClient(to: cluster, first: 0, name: "publisher")
            let subscriber = try await connectClient(to: cluster, first: 2, name: "subscriber")
            let received = Mutex<[String]>([])
            let queue = DispatchQueue(label: "test.delivery")
            _ = try subscriber.subscribe(to: "orders.*", deliveringOn: queue) { message in
                received.withLock { $0.append(message.subject + "=" + String(decoding: message.payload, as: UTF8.self)) }
            }
            try await subscriber.flush()
            // Interest travels between the nodes asynchronously: wait for it to reach node 1.
            try await eventually("interest on node 1") {
                try publisher.publish("orders.probe", payload: [])
                try await publisher.flush()
                return received.withLock { !$0.isEmpty }
            }
            received.withLock { $0.removeAll() }
            for index in 0..<500 { try publisher.publish("orders.north", payload: Array("\(index)".utf8)) }
            try await publisher.flush()
            try await eventually("500 messages") { received.withLock { $0.filter { $0.hasPrefix("orders.north=") }.count == 500 } }
            let payloads = received.withLock { $0.filter { $0.hasPrefix("orders.north=") } }
            #expect(payloads == (0..<500).map { "orders.north=\($0)" })
            await publisher.close()
            await subscriber.close()
        }
    }

    @Test func requestsGetTheirOwnRepliesAndHeadersSurvive() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let server = try await connectClient(to: cluster, name: "responder")
            let client = try await connectClient(to: cluster, name: "requester")
            _ = try server.subscribe(to: "echo") { message in
                var headers = NATSHeaders()
                headers.append("Echoed", message.headers?["X-Id"] ?? "none")
                try? server.publish(message.replyTo!, payload: Array(message.payload.reversed()), headers: headers)
            }
            try await server.flush()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        var headers = NATSHeaders()
                        headers.append("X-Id", "\(index)")
                        let reply = try await client.request("echo", payload: Array("abc\(index)".utf8), headers: headers)
                        #expect(String(decoding: reply.payload, as: UTF8.self) == String("abc\(index)".reversed()))
                        #expect(reply.headers?["Echoed"] == "\(index)")
                    }
                }
                try await group.waitForAll()
            }
            await server.close()
            await client.close()
        }
    }

    @Test func aRequestNobodyListensToFailsAtOnceAndASilentOneTimesOut() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            await #expect(throws: NATSClientError.noResponders(subject: "nobody.home")) {
                _ = try await client.request("nobody.home", payload: [], timeoutMilliseconds: 5_000)
            }
            _ = try client.subscribe(to: "silent") { _ in }
            try await client.flush()
            let started = Date()
            await #expect(throws: NATSClientError.timeout) {
                _ = try await client.request("silent", payload: [], timeoutMilliseconds: 200)
            }
            #expect(Date().timeIntervalSince(started) < 2)
            await client.close()
        }
    }

    @Test func unsubscribedHandlersHearNothingMore() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            let count = Mutex(0)
            let subscription = try client.subscribe(to: "ticks") { _ in count.withLock { $0 += 1 } }
            try client.publish("ticks", payload: [1])
            try await client.flush()
            try await eventually("first tick") { count.withLock { $0 == 1 } }
            subscription.unsubscribe()
            try client.publish("ticks", payload: [2])
            try await client.flush()
            // A probe on a second subscription proves the server has passed the second tick.
            let probe = Mutex(false)
            _ = try client.subscribe(to: "probe") { _ in probe.withLock { $0 = true } }
            try client.publish("probe", payload: [])
            try await client.flush()
            try await eventually("probe") { probe.withLock { $0 } }
            #expect(count.withLock { $0 } == 1)
            await client.close()
        }
    }

    @Test func badSubjectsAndOversizedPayloadsAreRefusedLocally() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            #expect(throws: NATSClientError.invalidCommand(.invalidSubject("a b"))) { try client.publish("a b", payload: []) }
            #expect(throws: NATSClientError.invalidCommand(.invalidSubject("x.>.y"))) { _ = try client.subscribe(to: "x.>.y") { _ in } }
            let limit = try #require(client.serverInfo).maxPayload
            #expect(throws: NATSClientError.invalidCommand(.payloadTooLarge(size: limit + 1, limit: limit))) {
                try client.publish("big", payload: [UInt8](repeating: 0, count: limit + 1))
            }
            try await client.flush()
            #expect(client.isConnected)
            await client.close()
            #expect(throws: NATSClientError.closed) { try client.publish("a", payload: []) }
        }
    }

    @Test func closingAClosedConnectionReturnsAtOnce() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            await client.close()
            // Owners of a connection close it on every path out; the second close must not wait
            // for a shutdown that already happened.
            await client.close()
            #expect(!client.isConnected)
        }
    }

    @Test func connectFailsWhenNoServerListens() async throws {
        let ports = try NATSCluster.freePorts(count: 2)
        var configuration = NATSConfiguration(servers: ports.map { NATSServerAddress(host: "127.0.0.1", port: $0) })
        configuration.reconnectWaitMilliseconds = 10
        let connection = NATSConnection(configuration: configuration)
        await #expect {
            try await connection.connect()
        } throws: { error in
            if case NATSClientError.noServerAvailable = error { return true }
            return false
        }
        await connection.close()
    }
}
