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
import OrderArchive
import SocketServer
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct BoardReadsTests {
    static let map = PartitionMap(partitionCount: 2)
    static let p0 = PartitionID(space: .boards, index: 0)
    static let p1 = PartitionID(space: .boards, index: 1)

    /// A campus name whose boards `partition` holds.
    static func campus(in partition: PartitionID) -> String {
        (0...).lazy.map { "campus-\($0)" }.first { map.partition(ofCampus: $0) == partition }!
    }

    /// Two board partitions' owners, each an application of its own, and a node to read them.
    typealias TwoOwners = ServedOwners

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

    /// Publishes and cancels `count` orders of each of `drafts`' types on `harness`, so the
    /// orders it numbers next do not share ids with another harness's.
    static func burn(_ count: Int, on harness: ApplicationHarness, by user: UserID) async throws {
        for _ in 0..<count {
            for draft in [Drafts.express(now: harness.clock.now), Drafts.bounty(now: harness.clock.now)] {
                let id = try await harness.publish(draft, by: user)
                try await harness.run(.cancel(reason: nil), on: id, by: user)
            }
        }
    }

    /// A user's orders and a runner's takings on a node whose boards two partitions hold: the
    /// orders still on either partition's shards, and those only the node's archive holds (it
    /// follows the history stream), each once (an order in both, once), newest first, paged by
    /// the cursor; the takings of every order counted once.
    @Test func aUsersOrdersComeFromEveryPartitionAndTheNodesArchiveEachOnce() async throws {
        let setup = try await TwoOwners()
        let (first, second) = (setup.owners[0], setup.owners[1])
        let elsewhere = try ApplicationHarness()
        var published: [OrderID] = []
        var runner = UserID(rawValue: 0)
        for (index, harness) in [first, second, elsewhere].enumerated() {
            let publisher = try await harness.logIn("1380013840\(index)")
            runner = try await harness.logIn("1380013841\(index)")
            #expect(publisher.rawValue == 1 && runner.rawValue == 2, "the same two users in every partition")
            // By a third user: the publisher's own orders are what the test counts.
            try await Self.burn(6 * index, on: harness, by: try await harness.logIn("1380013842\(index)"))
            published.append(try await harness.completedOrder(publisher: publisher, runner: runner, tip: Cents(300 + 200 * index)))
            if harness !== elsewhere {
                published.append(try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher))
            }
        }
        #expect(Set(published).count == published.count)
        // The node's archive holds the completed order of the partition no one serves here, and a
        // copy of the first partition's, which its shard still holds (in its rating window).
        let jetStream = JetStream(connection: setup.connections[0])
        let history = try await HistoryStream.open(in: jetStream, replicas: 1)
        let archivedElsewhere = try #require(await elsewhere.order(published[4]))
        let archivedCopy = try #require(await first.order(published[0]))
        try history.publishBlocking([ArchivedOrder(archivedElsewhere), ArchivedOrder(archivedCopy)])
        let archive = try OrderArchive(path: try makeTemporaryDirectory("bangbang-node-history") + "/archive.sqlite")
        let reads = PairHistoryReads(router: NodeRouter(requests: PartitionRequests(connection: setup.node)), partitions: [Self.p0, Self.p1],
                                     follower: HistoryFollower(stream: history, archive: archive, logger: Logger(level: .error, sink: { _ in })))

        func mine(_ data: JSONValue) async throws -> [String: JSONValue] {
            let query = try MyOrdersOperations.MineQuery(try Arguments(data))
            return try RoutedOperationsTests.reply(await withCheckedContinuation { continuation in
                reads.mine(id: "M", user: UserID(rawValue: 1), query: query, data: data) { continuation.resume(returning: $0) }
            })
        }
        var listed: [JSONValue] = []
        var data: JSONValue = ["limit": 2]
        for _ in 0..<10 {
            let reply = try await mine(data)
            guard reply["id"] == "M", case .object(let page)? = reply["data"], case .array(let orders)? = page["orders"] else {
                throw ClusterError("not a page: \(reply)")
            }
            listed += orders
            guard case .string(let cursor)? = page["next_cursor"] else { break }
            data = ["limit": 2, "cursor": .string(cursor)]
        }
        let ids = listed.compactMap { order -> UInt64? in if case .integer(let id)? = order["id"] { UInt64(id) } else { nil } }
        #expect(Set(ids) == Set(published.map(\.rawValue)) && ids.count == published.count, "each order once: \(ids)")
        let keys = listed.compactMap { order -> (Int64, UInt64)? in
            guard case .integer(let created)? = order["created_at"], case .integer(let id)? = order["id"] else { return nil }
            return (created, UInt64(id))
        }
        #expect(keys.map(\.1) == keys.sorted { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 > $1.1 }.map(\.1), "newest first")
        let active = try await mine(["scope": "active"])
        #expect(active["data"]?["orders"].map { if case .array(let orders) = $0 { orders.count } else { -1 } } == 2,
                "the open orders of both partitions: \(active)")

        let earnings = try RoutedOperationsTests.reply(await withCheckedContinuation { continuation in
            reads.earnings(id: "E", runner: runner) { continuation.resume(returning: $0) }
        })
        #expect(earnings["data"]?["completed_count"] == .integer(3) && earnings["data"]?["tips"] == .integer(300 + 500 + 700),
                "every completed order once, the one in both too: \(earnings)")
        await setup.stop()
    }

    /// A session's request for a partition its own node serves is run in the process, on the
    /// owner's queue for routed requests: answered with no NATS connection at all; one for a
    /// partition served elsewhere, or one taken out (handed back), goes over NATS.
    @Test func aRequestForAPartitionServedInTheProcessIsRunThere() async throws {
        let setup = try await TwoOwners()
        let user = try await setup.owners[0].logIn("13800138501")
        var draft = Drafts.bounty(now: setup.owners[0].clock.now)
        draft.campus = Self.campus(in: Self.p0)
        _ = try await setup.owners[0].publish(draft, by: user)
        // A connection closed for good: whatever goes over NATS fails at once.
        let closed = try await connectClient(to: setup.nats, name: "closed")
        await closed.close()
        let local = LocalOwners()
        local.add(setup.served[0], for: [Self.p0])
        let router = NodeRouter(requests: PartitionRequests(connection: closed), local: local)
        func list(_ campus: String) async throws -> [String: JSONValue] {
            let request = RoutedRequest(id: "L", operation: "board.list", data: ["campus": .string(campus)],
                                        actor: RoutedActor(user: user, isApprovedRunner: false))
            guard case .reply(let bytes) = await router.route(request, in: Self.map) else { throw ClusterError("no reply") }
            return try RoutedOperationsTests.reply(bytes)
        }
        let here = try await list(Self.campus(in: Self.p0))
        #expect(here["data"]?["total"] == .integer(1), "run in the process: \(here)")
        #expect(RoutedOperationsTests.errorCode(try await list(Self.campus(in: Self.p1))) == "storage_unavailable",
                "another partition's goes over NATS, which this router cannot reach")
        local.remove([Self.p0])
        #expect(RoutedOperationsTests.errorCode(try await list(Self.campus(in: Self.p0))) == "storage_unavailable", "taken out")
        local.add(setup.served[0], for: [Self.p0])

        // The reads of every board ask each partition in the process too: with both served here,
        // listed and counted with no NATS at all; with one not, the read fails as a whole.
        let reads = BoardReads(router: router, partitions: [Self.p0, Self.p1])
        func stats() async throws -> [String: JSONValue] {
            try RoutedOperationsTests.reply(await withCheckedContinuation { continuation in
                reads.stats(id: "S") { continuation.resume(returning: $0) }
            })
        }
        #expect(RoutedOperationsTests.errorCode(try await stats()) == "storage_unavailable", "p1 over NATS, unreachable")
        local.add(setup.served[1], for: [Self.p1])
        #expect(try await stats()["data"]?["types"]?["bounty"]?["open"] == .integer(1), "both in the process")
        let every = try await Self.list(reads, ["types": ["bounty"]])
        #expect(every["data"]?["total"] == .integer(1), "\(every)")
        setup.served[0].stopServing(Self.p0)
        #expect(RoutedOperationsTests.errorCode(try await list(Self.campus(in: Self.p0))) == "storage_unavailable",
                "an owner that stopped serving the partition runs nothing more for it")
        await setup.stop()
    }
}

extension ServedOwners {
    convenience init() async throws {
        try await self.init(serving: [BoardReadsTests.p0, BoardReadsTests.p1], of: BoardReadsTests.map)
    }

    func reads(partitions: [PartitionID] = [BoardReadsTests.p0, BoardReadsTests.p1],
               policy: RoutePolicy = RoutePolicy()) -> BoardReads {
        var requests = PartitionRequests(connection: node)
        requests.policy = policy
        return BoardReads(router: NodeRouter(requests: requests), partitions: partitions)
    }
}
