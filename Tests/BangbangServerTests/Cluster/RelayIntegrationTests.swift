// Two servers of one cluster over a real nats-server: node A owns the partition, node B relays
// its clients to A. Clients on either node see each other's orders live, an accept made
// through B is answered, the publisher on B hears its order's progress; an owner change
// closes B's relayed clients with 1012, and with no owner B refuses the upgrade with 503.
// `/metrics` on both nodes follows the relayed clients and counts refused envelopes.
import BangbangProtocol
import Foundation
import NATSTestSupport
import RelayProtocol
import Testing
import TestSupport
import WebSocketProtocol
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct RelayIntegrationTests {
    static func bounty(title: String) -> String {
        let deadline = Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000
        return #"{"type":"bounty","campus":"South","deadline":\#(deadline),"tip":500,"#
            + #""details":{"title":"\#(title)","description":"Black, near the gym","place":"Gym"}}"#
    }

    /// Makes the logged-in `runner` a verified runner, approved by `admin` (on any node).
    static func approve(_ runner: ProtocolClient, id: JSONValue, by admin: ProtocolClient) async throws {
        _ = try await runner.ok("runner.submit_verification", #"{"real_name":"Li Lei","student_id":"S\#(text(id))","school":"North"}"#)
        _ = try await admin.ok("admin.decide_verification", #"{"user_id":\#(text(id)),"decision":"approve"}"#)
        #expect(await runner.waitEvent { $0["event"] == .string("runner.verification_decided") } != nil)
    }

    static func text(_ value: JSONValue) -> String { String(decoding: JSONWriter.encode(value), as: UTF8.self) }

    static func isFeed(_ name: String, of order: JSONValue) -> (JSONValue) -> Bool {
        { $0["event"] == .string(name) && $0["data"]?["order"]?["id"] == order }
    }

    static func isChange(_ change: String, of order: JSONValue) -> (JSONValue) -> Bool {
        { $0["event"] == .string("order.changed") && $0["data"]?["order"]?["id"] == order && $0["data"]?["change"] == .string(change) }
    }

    @Test func clientsOnEitherNodeWorkTogetherThroughTheOwner() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses)

        let admin = try await a.connect()
        _ = try await admin.logIn(RelayTestNode.adminPhone)
        let publisherOnA = try await a.connect()
        _ = try await publisherOnA.logIn("+8613900007001")
        let runnerOnB = try await b.connect()
        let runnerLogin = try await runnerOnB.logIn("+8613900007002")
        try await Self.approve(runnerOnB, id: try #require(runnerLogin["user"]?["id"]), by: admin)
        #expect(b.relay.gateway.connectionCount == 1)
        #expect(a.relay.host.sessionCount == 1)

        // The feed reaches a runner relayed through B; the accept through B is answered.
        _ = try await runnerOnB.ok("board.subscribe", #"{"types":["bounty"]}"#)
        let order = try #require(try await publisherOnA.ok("order.publish", Self.bounty(title: "From A"))["order"]?["id"])
        #expect(await runnerOnB.waitEvent(Self.isFeed("feed.enter", of: order)) != nil, "the feed did not reach B")
        let accepted = try await runnerOnB.ok("order.accept", #"{"order_id":\#(Self.text(order))}"#)
        #expect(accepted["order"]?["status"] == .string("accepted"))
        #expect(await publisherOnA.waitEvent(Self.isChange("accepted", of: order)) != nil)

        // A publisher on B hears the progress a runner on A makes.
        let publisherOnB = try await b.connect()
        _ = try await publisherOnB.logIn("+8613900007003")
        let runnerOnA = try await a.connect()
        let runnerOnALogin = try await runnerOnA.logIn("+8613900007004")
        try await Self.approve(runnerOnA, id: try #require(runnerOnALogin["user"]?["id"]), by: admin)
        let second = try #require(try await publisherOnB.ok("order.publish", Self.bounty(title: "From B"))["order"]?["id"])
        _ = try await runnerOnA.ok("order.accept", #"{"order_id":\#(Self.text(second))}"#)
        #expect(await publisherOnB.waitEvent(Self.isChange("accepted", of: second)) != nil, "the accept did not reach B")
        _ = try await runnerOnA.ok("order.start", #"{"order_id":\#(Self.text(second))}"#)
        #expect(await publisherOnB.waitEvent(Self.isChange("in_progress", of: second)) != nil, "the progress did not reach B")

        // A client that resumes through B after a reconnect is the same user.
        let token = try #require(runnerLogin["token"])
        let resumed = try await b.connect()
        let again = try await resumed.ok("auth.resume", #"{"token":\#(Self.text(token))}"#)
        #expect(again["user"]?["id"] == runnerLogin["user"]?["id"])

        // The owner moves away from A. B hears it first (A, in its own view, still owns): B
        // closes its relayed clients by itself; then A hears it and closes its own.
        b.directory.announce("node-c")
        #expect(await runnerOnB.waitForClose() == .serviceRestart)
        #expect(await publisherOnB.waitForClose() == .serviceRestart)
        #expect(await resumed.waitForClose() == .serviceRestart)
        #expect(b.relay.gateway.connectionCount == 0)
        #expect(await eventually { a.relay.host.sessionCount == 0 }, "A kept the sessions B closed")
        a.directory.announce("node-c")
        #expect(await publisherOnA.waitForClose() == .serviceRestart)
        #expect(await runnerOnA.waitForClose() == .serviceRestart)

        // Nobody owns: the upgrade is refused until someone does.
        b.directory.announce(nil)
        let refusal = try #require(upgradeAnswer(port: b.port))
        #expect(refusal.hasPrefix("HTTP/1.1 503"), "\(refusal)")
        #expect(refusal.contains("Retry-After: 2"), "\(refusal)")

        await b.stop()
        await a.stop()
    }

    /// Polls `/metrics` well under the per-address handshake rate, which counts each scrape.
    static let scrapeInterval = Duration.milliseconds(50)

    @Test func metricsFollowRelayedClientsAndRefusedEnvelopes() async throws {
        let nats = try await NATSCluster.shared(size: 1)
        defer { nats.stop() }
        let a = try await RelayTestNode(name: "node-a", owner: "node-a", nats: nats.addresses)
        let b = try await RelayTestNode(name: "node-b", owner: "node-a", nats: nats.addresses)
        #expect(metric("bangbang_cluster_owner", port: a.port) == 1)
        #expect(metric("bangbang_cluster_owner", port: b.port) == 0)
        #expect(metric("bangbang_relay_sessions", port: a.port) == 0)
        #expect(metric("bangbang_relayed_connections", port: b.port) == 0)

        let client = try await b.connect()
        _ = try await client.logIn("+8613900007101")
        #expect(metric("bangbang_relayed_connections", port: b.port) == 1)
        #expect(metric("bangbang_relay_sessions", port: a.port) == 1)
        #expect(metric("bangbang_relay_sessions", port: b.port) == 0)
        #expect(metric("bangbang_relayed_connections", port: a.port) == 0)
        for node in [a, b] {
            #expect((metric(#"bangbang_relay_frames_total{direction="in"}"#, port: node.port) ?? 0) > 0, "\(node.name) heard nothing")
            #expect((metric(#"bangbang_relay_frames_total{direction="out"}"#, port: node.port) ?? 0) > 0, "\(node.name) sent nothing")
            #expect(metric("bangbang_relay_publish_failures_total", port: node.port) == 0)
            #expect(metric("bangbang_relay_refused_total", port: node.port) == 0)
        }

        client.close()
        #expect(await client.waitForClose() != nil)
        #expect(await eventually(interval: Self.scrapeInterval) { metric("bangbang_relayed_connections", port: b.port) == 0 })
        #expect(await eventually(interval: Self.scrapeInterval) { metric("bangbang_relay_sessions", port: a.port) == 0 },
                "A kept the session B closed")

        // Garbage on the owner's subject, and a well-formed envelope to B from an owner none of
        // its clients is relayed to: both are refused, each by its receiver only.
        try b.nats.publish(RelayNode.ownerSubject("node-a"), payload: Array("not an envelope".utf8))
        #expect(await eventually(interval: Self.scrapeInterval) { metric("bangbang_relay_refused_total", port: a.port) == 1 })
        let stranger = RelayNode(nodeID: "node-z", incarnation: 7)
        try a.nats.publish(b.relay.gateway.node.gatewaySubject, payload: stranger.envelope([.alive(connections: [])]))
        #expect(await eventually(interval: Self.scrapeInterval) { metric("bangbang_relay_refused_total", port: b.port) == 1 })
        #expect(metric("bangbang_relay_refused_total", port: a.port) == 1)

        await b.stop()
        await a.stop()
    }
}
