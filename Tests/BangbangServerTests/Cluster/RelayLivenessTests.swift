// What the relay does when a side goes quiet, and how a broadcast crosses NATS: a gateway that
// stops talking loses its sessions on the owner; an owner that stops answering gets its relayed
// clients closed with 1012 by the gateway; a feed event for several relayed runners of one
// gateway crosses NATS as one `deliver` naming them all. And a figure: the round trip of a
// request through a gateway against the same request on the owner (printed, never asserted).
import BangbangProtocol
import Foundation
import NATSClient
import NATSTestSupport
import RelayProtocol
import Synchronization
import Testing
import TestSupport
import WebSocketProtocol
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct RelayLivenessTests {
    static let quick = RelayTimings(aliveIntervalMilliseconds: 100, gatewayTimeoutMilliseconds: 600, ownerTimeoutMilliseconds: 600)

    @Test func theOwnerDropsTheSessionsOfAGatewayThatFallsSilent() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses, timings: Self.quick)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses, timings: Self.quick)
        let client = try await b.connect()
        _ = try await client.logIn("+8613900008001")
        #expect(a.relay.host.sessionCount == 1)
        // Three missed beats later the session is still there: the gateway keeps beating.
        try await Task.sleep(for: .milliseconds(1_200))
        #expect(a.relay.host.sessionCount == 1, "a live gateway's session was dropped")
        await b.dropNATS()
        #expect(await eventually(timeout: .seconds(5)) { a.relay.host.sessionCount == 0 },
                "the owner kept the session of a gateway it no longer hears")
        await b.stop()
        await a.stop()
    }

    @Test func aGatewayClosesItsClientsWhenTheOwnerStopsAnswering() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses, timings: Self.quick)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses, timings: Self.quick)
        let client = try await b.connect()
        _ = try await client.logIn("+8613900008002")
        try await Task.sleep(for: .milliseconds(1_200))
        #expect(b.relay.gateway.connectionCount == 1, "a client of an answering owner was closed")
        await a.dropNATS()
        #expect(await client.waitForClose() == .serviceRestart)
        #expect(b.relay.gateway.connectionCount == 0)
        await b.stop()
        await a.stop()
    }

    @Test func aClientTheOwnerDoesNotKnowIsClosedWith1012() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses, timings: Self.quick)
        // A patient gateway: only the owner's answer to its beat can close the client here.
        let patient = RelayTimings(aliveIntervalMilliseconds: 100, gatewayTimeoutMilliseconds: 600, ownerTimeoutMilliseconds: 60_000)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses, timings: patient)
        let client = try await b.connect()
        _ = try await client.logIn("+8613900008003")
        // The owner's process dies without a word and comes back under the same name, owning
        // again: it has never heard of the client the gateway still lists.
        await a.dropNATS()
        await a.stop()
        let restarted = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses, timings: Self.quick)
        #expect(await client.waitForClose() == .serviceRestart)
        #expect(await eventually { b.relay.gateway.connectionCount == 0 })
        await b.stop()
        await restarted.stop()
    }

    @Test func aFeedEventCrossesNATSOnceForEveryRunnerOfAGateway() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses, eventLoops: 1)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses)
        var runners: [ProtocolClient] = []
        for index in 0..<4 {
            let runner = try await b.connect()
            _ = try await runner.logIn("+86139000081\(10 + index)")
            _ = try await runner.ok("board.subscribe", #"{"types":["bounty"]}"#)
            runners.append(runner)
        }
        let spy = NATSConnection(configuration: NATSConfiguration(servers: nats.addresses, name: "spy"))
        try await spy.connect()
        let delivers = Mutex<[(connections: [UInt64], text: [UInt8])]>([])
        _ = try spy.subscribe(to: "bb.gateway.node-b.>") { message in
            guard let envelope = try? RelayCodec.decode(message.payload, travelling: .toGateway) else { return }
            for case .deliver(let connections, let text) in envelope.frames {
                delivers.withLock { $0.append((connections, text)) }
            }
        }
        try await spy.flush()
        let publisher = try await a.connect()
        _ = try await publisher.logIn("+8613900008120")
        let order = try #require(try await publisher.ok("order.publish", RelayIntegrationTests.bounty(title: "For all"))["order"]?["id"])
        for runner in runners {
            #expect(await runner.waitEvent(RelayIntegrationTests.isFeed("feed.enter", of: order)) != nil)
        }
        let feedFrames = delivers.withLock { $0 }.filter { String(decoding: $0.text, as: UTF8.self).contains("feed.enter") }
        #expect(feedFrames.count == 1, "one deliver for the whole gateway, got \(feedFrames.map(\.connections))")
        #expect(Set(feedFrames.flatMap(\.connections)).count == 4)
        await spy.close()
        await b.stop()
        await a.stop()
    }

    /// Sequential `info.get` round trips, on the owner and through a gateway. The figure goes
    /// to the test's output (docs/scale-out.md quotes it); nothing is asserted about it.
    @Test func measuresTheRoundTripOfOneRelayHop() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses)
        let direct = try await a.connect()
        let relayed = try await b.connect()
        direct.checkInterval = .microseconds(10)
        relayed.checkInterval = .microseconds(10)
        func median(_ client: ProtocolClient) async throws -> Double {
            var samples: [Double] = []
            for round in 0..<300 {
                let start = ContinuousClock.now
                _ = try await client.ok("info.get")
                let elapsed = ContinuousClock.now - start
                if round >= 50 { samples.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6) }
            }
            return samples.sorted()[samples.count / 2]
        }
        let onOwner = try await median(direct)
        let throughGateway = try await median(relayed)
        print("relay round trip (info.get, median of 250): direct \(Int(onOwner)) µs, through a gateway \(Int(throughGateway)) µs,"
              + " one relay hop adds \(Int(throughGateway - onOwner)) µs")
        await b.stop()
        await a.stop()
    }
}
