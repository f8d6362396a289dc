// The reads of every board on a node whose boards two partitions hold, over a real nats-server:
// two owners, each an application holding its campuses' orders, answer their parts, and the node
// reads `board.list` (by cursor and by offset) and `board.stats` as one node holding both would
// answer them; a listing of one campus goes whole to that campus's partition, and a part that
// cannot be had fails the read with a reply, not a hang.
import BangbangCore
import BangbangProtocol
import Cluster
import Foundation
import InboxProtocol
import JSON
import NATSClient
import NATSTestSupport
import SocketServer
import Testing
import TestSupport
@testable import BangbangServer

@Suite(.serialized, .timeLimit(.minutes(2))) struct BoardReadsTests {
    static let map = PartitionMap(partitionCount: 2)
    static let p0 = PartitionID(space: .boards, index: 0)
    static let p1 = PartitionID(space: .boards, index: 1)

    /// A campus name whose boards `partition` holds.
    static func campus(in partition: PartitionID) -> String {
        (0...).lazy.map { "campus-\($0)" }.first { map.partition(ofCampus: $0) == partition }!
    }

    final class TwoOwners: Sendable {
        let nats: NATSCluster
        let owners: [ApplicationHarness]
        let connections: [NATSConnection]
        let served: [OwnerRequests]
        let node: NATSConnection

        init() async throws {
            nats = try await NATSCluster.start(size: 1)
            var owners: [ApplicationHarness] = []
            var connections: [NATSConnection] = []
            var served: [OwnerRequests] = []
            for partition in [BoardReadsTests.p0, BoardReadsTests.p1] {
                let harness = try ApplicationHarness()
                let connection = try await connectClient(to: nats, name: "owner-\(partition)")
                let owner = OwnerRequests(requests: PartitionRequests(connection: connection), app: harness.app, map: BoardReadsTests.map)
                try owner.serve(partition)
                owners.append(harness)
                connections.append(connection)
                served.append(owner)
            }
            self.owners = owners
            self.connections = connections
            self.served = served
            node = try await connectClient(to: nats, name: "session-node")
            for connection in connections { try await connection.flush() }
        }

        func reads(partitions: [PartitionID] = [BoardReadsTests.p0, BoardReadsTests.p1],
                   policy: RoutePolicy = RoutePolicy()) -> BoardReads {
            var requests = PartitionRequests(connection: node)
            requests.policy = policy
            return BoardReads(requests: requests, partitions: partitions)
        }

        func stop() async {
            await node.close()
            for connection in connections { await connection.close() }
            nats.stop()
        }
    }

    /// `data`'s `board.list` read by `reads`; `query` when the node's check would refuse `data`.
    static func list(_ reads: BoardReads, _ data: JSONValue, query: OrderListQuery? = nil) async throws -> [String: JSONValue] {
        let query = try query ?? BoardWire.decodeListQuery(try Arguments(data))
        let bytes = await withCheckedContinuation { continuation in
            reads.list(id: "L", data: data, query: query) { continuation.resume(returning: $0) }
        }
        return try RoutedOperationsTests.reply(bytes)
    }

    /// The orders' (tip, id) pairs of a `board.list` reply, its total and its cursor.
    static func page(_ reply: [String: JSONValue]) throws -> (orders: [(Int64, Int64)], total: Int64?, cursor: String?) {
        guard reply["id"] == "L", reply["ok"] == .bool(true), case .object(let data)? = reply["data"],
              case .array(let orders)? = data["orders"] else { throw ClusterError("not a listing: \(reply)") }
        let pairs = try orders.map { order -> (Int64, Int64) in
            guard case .object(let fields) = order, case .integer(let tip)? = fields["tip"], case .integer(let id)? = fields["id"] else {
                throw ClusterError("not an order: \(order)")
            }
            return (tip, id)
        }
        let total: Int64? = if case .integer(let total)? = data["total"] { total } else { nil }
        let cursor: String? = if case .string(let cursor)? = data["next_cursor"] { cursor } else { nil }
        return (pairs, total, cursor)
    }

    @Test func aNodeReadsEveryBoardFromBothPartitionsAsOneNodeHoldingThemWould() async throws {
        let setup = try await TwoOwners()
        let (first, second) = (setup.owners[0], setup.owners[1])
        let user = try await first.logIn("13800138301")
        let other = try await second.logIn("13800138302")
        // The second owner's serials start past the first's, as each partition's own residue would.
        for _ in 0..<8 {
            let burnt = try await second.publish(Drafts.bounty(now: second.clock.now), by: other)
            try await second.run(.cancel(reason: nil), on: burnt, by: other)
        }
        let burnt = try await second.publish(Drafts.express(now: second.clock.now), by: other)
        try await second.run(.cancel(reason: nil), on: burnt, by: other)
        var published: [(tip: Int64, id: Int64)] = []
        for (harness, publisher, tips) in [(first, user, [300, 800, 150, 800, 500, 220]), (second, other, [800, 400, 150, 900, 260])] {
            let campus = Self.campus(in: harness === first ? Self.p0 : Self.p1)
            for tip in tips {
                var draft = Drafts.bounty(now: harness.clock.now)
                draft.tip = Cents(tip)
                draft.campus = campus
                let id = try await harness.publish(draft, by: publisher)
                published.append((Int64(tip), Int64(id.rawValue)))
            }
            var express = Drafts.express(now: harness.clock.now)
            express.campus = campus
            _ = try await harness.publish(express, by: publisher)
        }
        #expect(Set(published.map(\.id)).count == published.count, "no order id twice")
        // Highest tip first, ties by the higher id: the listing a node holding both would give.
        let expected = published.sorted { $0.tip != $1.tip ? $0.tip > $1.tip : $0.id > $1.id }.map { [$0.tip, $0.id] }
        let reads = setup.reads()

        let top = try Self.page(try await Self.list(reads, ["types": ["bounty"], "sort": "tip", "limit": 4]))
        #expect(top.orders.map { [$0.0, $0.1] } == Array(expected.prefix(4)) && top.total == 11 && top.cursor != nil, "\(top)")
        var walked = top.orders.map { [$0.0, $0.1] }
        var cursor = top.cursor
        while let after = cursor {
            let next = try Self.page(try await Self.list(reads, ["types": ["bounty"], "sort": "tip", "limit": 4, "cursor": .string(after)]))
            #expect(next.total == 11)
            walked += next.orders.map { [$0.0, $0.1] }
            cursor = next.cursor
        }
        #expect(walked == expected, "following the cursors reads every order once, in order")
        let deep = try Self.page(try await Self.list(reads, ["types": ["bounty"], "sort": "tip", "offset": 9, "limit": 5]))
        #expect(deep.orders.map { [$0.0, $0.1] } == Array(expected.suffix(2)) && deep.cursor == nil, "\(deep)")
        let everything = try Self.page(try await Self.list(reads, [:]))
        #expect(everything.total == 13 && everything.orders.count == 13, "every type of both partitions: \(everything.total ?? -1)")

        // A part's refusal is the client's reply (the node checks first; this one it did not).
        let refused = try await Self.list(reads, ["types": ["bounty"], "keyword": .string(String(repeating: "k", count: 61))],
                                           query: OrderListQuery(filter: FeedFilter(types: [.bounty])))
        #expect(RoutedOperationsTests.errorCode(refused) == "invalid_field" && refused["id"] == "L", "\(refused)")

        // The counts: open orders summed, runners as the owner hearing the most reports counts them.
        let (ann, bo) = (UserID(rawValue: 501), UserID(rawValue: 502))
        first.app.runnersElsewhere.heard(WatchingReport(node: "n3", watching: [.bounty: [ann]]), at: EventLoop.now)
        second.app.runnersElsewhere.heard(WatchingReport(node: "n3", watching: [.bounty: [ann, bo], .express: [bo]]),
                                          at: EventLoop.now)
        let stats = try RoutedOperationsTests.reply(await withCheckedContinuation { continuation in
            reads.stats(id: "S") { continuation.resume(returning: $0) }
        })
        #expect(stats["id"] == "S" && stats["data"] == ["types": [
            "bounty": ["open": 11, "runners_online": 2], "express": ["open": 2, "runners_online": 1],
            "group": ["open": 0, "runners_online": 0], "purchase": ["open": 0, "runners_online": 0],
        ]], "\(stats)")

        // A listing of one campus is its partition's whole, routed there; a part cannot answer for all.
        let router = NodeRouter(requests: PartitionRequests(connection: setup.node))
        func route(_ data: JSONValue) async throws -> [String: JSONValue] {
            let request = RoutedRequest(id: "C", operation: "board.list", data: data, actor: RoutedActor(user: user, isApprovedRunner: false))
            guard case .reply(let bytes) = await router.route(request, in: Self.map) else { throw ClusterError("no reply") }
            return try RoutedOperationsTests.reply(bytes)
        }
        let campus = Self.campus(in: Self.p1)
        let routed = try await route(["campus": .string(campus), "sort": "tip"])
        guard case .object(let data)? = routed["data"], case .array(let orders)? = data["orders"] else {
            throw ClusterError("no listing: \(routed)")
        }
        #expect(orders.count == 6 && data["total"] == 6, "the five bounties and the express order of \(campus)")
        let whole = try await route([:])
        #expect(RoutedOperationsTests.errorCode(whole) == "bad_request", "\(whole)")
        await setup.stop()
    }

    /// What a client of a node running sessions sees: its `board.list` and `board.stats` read from
    /// both partitions, a campus's listing from that campus's, a bad field refused on the node.
    @Test func aClientOfANodeSessionListsAndCountsEveryPartitionsBoards() async throws {
        let setup = try await TwoOwners()
        // The first owner also holds every account, so logging in works as it does in a cluster.
        for index in 0..<Self.map.partitionCount { try setup.served[0].serve(PartitionID(space: .accounts, index: index)) }
        try await setup.connections[0].flush()
        let (first, second) = (setup.owners[0], setup.owners[1])
        let publisher = try await first.logIn("13800138311")
        for (harness, tip) in [(first, 300), (second, 700), (first, 500)] as [(ApplicationHarness, Cents)] {
            var draft = Drafts.bounty(now: harness.clock.now)
            draft.tip = tip
            draft.campus = Self.campus(in: harness === first ? Self.p0 : Self.p1)
            _ = try await harness.publish(draft, by: publisher)
        }
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.clusterSessions = .node
        configuration.eventLoops = 1
        let standby = StandbyListener(configuration: configuration, directory: TestOwnerDirectory(localNodeID: "bb2", owner: "bb1"),
                                      logger: Logger(level: .error, sink: { _ in }), map: Self.map)
        let port = try #require(try standby.start().first?.port)
        try standby.startRelaying(through: setup.node)
        defer { standby.stop() }

        let client = try await ProtocolClient.connect(port: port)
        _ = try await client.logIn("+8613800138312")
        let listed = try await client.ok("board.list", #"{"types":["bounty"],"sort":"tip","limit":2}"#)
        let tips: [JSONValue?] = if case .array(let items)? = listed["orders"] { items.map { $0["tip"] } } else { [] }
        #expect(tips == [.integer(700), .integer(500)], "\(listed)")
        #expect(listed["total"] == .integer(3) && listed["next_cursor"] != nil, "\(listed)")
        let stats = try await client.ok("board.stats")
        #expect(stats["types"]?["bounty"]?["open"] == .integer(3), "\(stats)")
        let campus = try await client.ok("board.list", #"{"campus":"\#(Self.campus(in: Self.p1))"}"#)
        #expect(campus["total"] == .integer(1), "one campus's listing, from its partition: \(campus)")
        let badOffset = await client.call("board.list", #"{"offset":-1}"#)
        #expect(badOffset?["error"]?["field"] == .string("offset"), "checked on the node: \(String(describing: badOffset))")
        client.close()
        await setup.stop()
    }

    @Test func aPartWithNoOwnerFailsTheReadWithAReply() async throws {
        let setup = try await TwoOwners()
        let reads = setup.reads(partitions: [Self.p0, Self.p1, PartitionID(space: .boards, index: 2)],
                                policy: RoutePolicy(boundMilliseconds: 300, firstPauseMilliseconds: 50, longestPauseMilliseconds: 100))
        let listed = try await Self.list(reads, ["types": ["bounty"]])
        #expect(RoutedOperationsTests.errorCode(listed) == "storage_unavailable" && listed["id"] == "L", "\(listed)")
        let stats = try RoutedOperationsTests.reply(await withCheckedContinuation { continuation in
            reads.stats(id: "S") { continuation.resume(returning: $0) }
        })
        #expect(RoutedOperationsTests.errorCode(stats) == "storage_unavailable" && stats["id"] == "S", "\(stats)")
        await setup.stop()
    }
}
