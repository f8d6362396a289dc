// Board changes on the feed subjects, over a real nats-server: a board partition's owner publishes
// each change once, with its own number and the order before and after it, and a node forwards
// the changes of every partition to its watchers numbered by itself, once each, framed for them,
// telling of a partition whose numbers skip and of a change it cannot read.
import BangbangCore
import BangbangStorage
import Cluster
import Foundation
import InboxProtocol
import NATSClient
import NATSTestSupport
import Synchronization
import BangbangProtocol
import JSON
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct FollowedBoardsTests {
    /// A board partition's owner (`p0`) publishing its changes, and a node following the boards.
    final class BoardsSetup: Sendable {
        let nats: NATSCluster
        let harness: ApplicationHarness
        let ownerConnection: NATSConnection
        let nodeConnection: NATSConnection
        let ownerMetrics = RelayMetrics()
        let nodeMetrics = RelayMetrics()
        let followed: FollowedBoards
        let received = Received()
        var delivered: [FeedBroadcast] { received.delivered.withLock { $0 } }
        var gaps: [(OrderType, String)] { received.gaps.withLock { $0 } }

        /// What the node's sink was given.
        final class Received: Sendable {
            let delivered = Mutex<[FeedBroadcast]>([])
            let gaps = Mutex<[(OrderType, String)]>([])
        }

        init() async throws {
            nats = try await NATSCluster.shared(size: 1)
            ownerConnection = try await connectClient(to: nats, name: "owner")
            nodeConnection = try await connectClient(to: nats, name: "watching-node")
            harness = try ApplicationHarness()
            harness.app.attach(to: [])
            let publisher = FeedEventPublisher(connection: ownerConnection, partition: PartitionID(space: .boards, index: 0),
                                               metrics: ownerMetrics)
            harness.app.publisher.boards.eventPublisher.withLock { $0 = publisher }
            let received = received
            followed = FollowedBoards(connection: nodeConnection, metrics: nodeMetrics, logger: Logger(level: .error, sink: { _ in }),
                                      sink: FollowedBoards.Sink(deliver: { broadcast in received.delivered.withLock { $0.append(broadcast) } },
                                                                gap: { type, reason in received.gaps.withLock { $0.append((type, reason)) } }))
        }

        func watch(_ type: OrderType) async throws {
            let followed = followed
            let outcome: Result<Void, NATSClientError> = followed.queue.sync {
                do throws(NATSClientError) { try followed.watch(type) } catch { return .failure(error) }
                return .success(())
            }
            try outcome.get()
            try await nodeConnection.flush()
        }

        func unwatch(_ type: OrderType) { followed.queue.sync { followed.unwatch(type) } }

        /// The owner answers `p0`'s routed requests (its part of a listing) in a deployment of
        /// `partitionCount` board partitions.
        func answerListings(of partitionCount: Int) throws -> OwnerRequests {
            let owner = OwnerRequests(requests: PartitionRequests(connection: ownerConnection), app: harness.app,
                                      map: PartitionMap(partitionCount: partitionCount))
            try owner.serve(PartitionID(space: .boards, index: 0))
            return owner
        }

        func stop() async {
            await nodeConnection.close()
            await ownerConnection.close()
            nats.stop()
        }
    }

    static func text(_ broadcast: FeedBroadcast, _ kind: FeedChange) -> String {
        String(decoding: broadcast.message(for: kind).payload, as: UTF8.self)
    }

    @Test func theOwnerPublishesEachBoardChangeOnceOnItsFeedSubject() async throws {
        let setup = try await BoardsSetup()
        let harness = setup.harness
        let heard = Mutex<[(subject: String, change: FeedEventFrame.Event)]>([])
        let listener = try await connectClient(to: setup.nats, name: "listener")
        _ = try listener.subscribe(to: "bb.feed.>") { message in
            guard let change = FeedEventFrame.decode(message.payload) else {
                Issue.record("not a change: \(message.subject)")
                return
            }
            heard.withLock { $0.append((message.subject, FeedEventFrame.Event(partition: change.partition, sequence: change.sequence,
                                                                               before: ArraySlice(change.before), after: ArraySlice(change.after)))) }
        }
        try await listener.flush()
        let user = try await harness.logIn("13800138401")
        var bounties: [OrderID] = []
        for _ in 0..<3 { bounties.append(try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)) }
        try await harness.run(.cancel(reason: nil), on: bounties[1], by: user)
        let express = try await harness.publish(Drafts.express(now: harness.clock.now), by: user)
        try await eventually("five changes heard") { heard.withLock { $0.count } == 5 }
        let changes = heard.withLock { $0 }
        #expect(changes.map(\.subject) == Array(repeating: "bb.feed.p0.bounty", count: 4) + ["bb.feed.p0.express"])
        #expect(changes.map(\.change.sequence) == [1, 2, 3, 4, 1], "each board's own numbers")
        #expect(changes.allSatisfy { $0.change.partition == 0 })
        #expect(harness.app.publisher.boards.sequence(of: .bounty) == 4)
        let afters = try changes.map { try StoredOrder.decode(Array($0.change.after)) }
        #expect(afters.map(\.id) == bounties + [bounties[1], express])
        let cancelled = await harness.order(bounties[1])
        #expect(afters[3].status == .cancelled && afters[3] == cancelled)
        #expect(changes.enumerated().allSatisfy { $0.element.change.before.isEmpty == ($0.offset != 3) }, "only the cancel has a before")
        #expect(try StoredOrder.decode(Array(changes[3].change.before)).status == .open)
        #expect(setup.ownerMetrics.feedEventsPublished.current == 5)
        await listener.close()
        await setup.stop()
    }

    @Test func aNodeNumbersEveryPartitionsChangesOnceAndTellsOfAGap() async throws {
        let setup = try await BoardsSetup()
        let harness = setup.harness
        try await setup.watch(.bounty)
        let user = try await harness.logIn("13800138411")
        // A second partition, `p1`, is played by the test: its changes carry an order of the board.
        let sample = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        let order = try #require(await harness.order(sample))
        func p1(_ sequence: UInt64, after: [UInt8] = StoredOrder.encoded(order)) throws {
            try setup.ownerConnection.publish("bb.feed.p1.bounty", payload: FeedEventFrame.encode(partition: 1, sequence: sequence,
                                                                                                  before: nil, after: after))
        }
        try p1(1)
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        try p1(2)
        try p1(2)
        _ = try await harness.publish(Drafts.express(now: harness.clock.now), by: user)
        try await eventually("four changes forwarded") { setup.delivered.count == 4 }
        #expect(setup.gaps.isEmpty)
        try p1(4)
        try await eventually("the gap told") { setup.gaps.count == 1 }
        #expect(setup.gaps[0].0 == .bounty && setup.gaps[0].1.contains("p1"))
        try p1(5)
        try p1(6, after: [0x02, 0xFF])
        try await eventually("the unreadable change told") { setup.gaps.count == 2 }
        let delivered = setup.delivered
        #expect(delivered.count == 5, "p0's two, p1's 1, 2 and 5; the copy, the express order and the gap's change not")
        #expect(delivered.map(\.boardSequence) == Array(1...5), "one numbering, the node's")
        for broadcast in delivered {
            let enter = Self.text(broadcast, .enter)
            #expect(enter.contains("\"event\":\"feed.enter\"") && enter.contains("\"seq\":\(broadcast.boardSequence)"), "\(enter)")
        }
        #expect(setup.followed.queue.sync { setup.followed.position(of: .bounty) } == 6)
        #expect(setup.nodeMetrics.feedGaps.current == 2 && setup.nodeMetrics.followedBoards.current == 1)
        await setup.stop()
    }

    @Test func whatWasMissedWhileNobodyWatchedIsNoGapAndTheNumberingGoesOn() async throws {
        let setup = try await BoardsSetup()
        let harness = setup.harness
        let user = try await harness.logIn("13800138421")
        try await setup.watch(.bounty)
        try await setup.watch(.bounty)
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        try await eventually("the first change") { setup.delivered.count == 1 }
        setup.unwatch(.bounty)
        #expect(setup.nodeMetrics.followedBoards.current == 1, "one watcher remains")
        setup.unwatch(.bounty)
        #expect(setup.nodeMetrics.followedBoards.current == 0)
        for _ in 0..<2 { _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user) }
        try await eventually("both published") { setup.ownerMetrics.feedEventsPublished.current == 3 }
        // Through the NATS server while nobody here listens, before the board is watched again.
        try await setup.ownerConnection.flush()
        try await setup.watch(.bounty)
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        try await eventually("the change after the pause") { setup.delivered.count == 2 }
        #expect(setup.delivered.map(\.boardSequence) == [1, 2] && setup.gaps.isEmpty)
        await setup.stop()
    }

    /// What a watcher's subscription was given.
    final class Watcher: Sendable {
        let replies = Mutex<[Result<[UInt8], FollowedBoards.SubscriptionFailure>]>([])
        let changes = Mutex<[FeedBroadcast]>([])

        var subscriber: FollowedBoards.Subscriber {
            FollowedBoards.Subscriber(reply: { [self] result in replies.withLock { $0.append(result) } },
                                      deliver: { [self] broadcast in changes.withLock { $0.append(broadcast) } })
        }

        var reply: [String: JSONValue]? {
            guard case .success(let data)? = replies.withLock({ $0.first }), case .object(let members) = try? JSONParser.parse(data) else {
                return nil
            }
            return members
        }
    }

    static let p0 = PartitionID(space: .boards, index: 0)
    static let p1 = PartitionID(space: .boards, index: 1)

    func subscribe(_ setup: BoardsSetup, _ data: JSONValue, partitions: [PartitionID], watcher: Watcher,
                   policy: RoutePolicy = RoutePolicy()) throws -> UInt64 {
        let query = try BoardOperations.subscriptionQuery(try Arguments(data))
        let requests = PartitionRequests(connection: setup.nodeConnection, policy: policy)
        return setup.followed.queue.sync {
            setup.followed.subscribe(data, query: query, partitions: partitions, requests: requests, subscriber: watcher.subscriber)
        }
    }

    @Test func aNodesSubscriptionIsTheOwnersOwnReplyWithTheNodesSequence() async throws {
        let setup = try await BoardsSetup()
        let owner = try setup.answerListings(of: 1)
        let harness = setup.harness
        let user = try await harness.logIn("13800138431")
        for tip in [300, 900, 500] as [Cents] {
            var draft = Drafts.bounty(now: harness.clock.now)
            draft.tip = tip
            _ = try await harness.publish(draft, by: user)
        }
        let data: JSONValue = ["types": ["bounty"], "sort": "tip", "limit": 2]
        let watcher = Watcher()
        _ = try subscribe(setup, data, partitions: [Self.p0], watcher: watcher)
        try await eventually("the reply") { watcher.replies.withLock { $0.count } == 1 }
        let query = try BoardOperations.subscriptionQuery(try Arguments(data))
        let page = await withCheckedContinuation { continuation in
            OrderOperations.list(query, app: harness.app) { continuation.resume(returning: $0) }
        }
        // What the owner's own `board.subscribe` writes, with the node's sequence (nothing
        // forwarded here yet).
        let expected = JSONWriter.encode(["orders": .array(page.items.map(OrderWire.encode)), "seq": ["bounty": 0],
                                          "total": .integer(Int64(page.total))])
        guard case .success(let bytes)? = watcher.replies.withLock({ $0.first }) else {
            Issue.record("no reply")
            return
        }
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(page.items.map(\.tip) == [900, 500] && page.total == 3)
        owner.stopAll()
        await setup.stop()
    }

    @Test func changesDuringTheListingFollowTheReplyUnlessAPartReflectsThem() async throws {
        let setup = try await BoardsSetup()
        let owner = try setup.answerListings(of: 2)
        let harness = setup.harness
        let user = try await harness.logIn("13800138441")
        var p0Orders: [OrderID] = []
        for _ in 0..<4 { p0Orders.append(try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)) }
        // `p1` is the test's: it answers its part only when told, and publishes its changes 3 and 4.
        let p1Order = try #require(await harness.order(p0Orders[0]))
        let release = AsyncStream<Void>.makeStream()
        let p1Part = BoardListAnswer.Answer(sequences: ["bounty": 3], total: 1, hasMore: false, entries: [
            BoardListAnswer.Entry(key: p1Order.createdAt.milliseconds, id: 1_000_001, order: Array(#"{"id":1000001}"#.utf8))])
        let p1Requests = PartitionRequests(connection: setup.ownerConnection)
        let p1Subscription = try p1Requests.serve(Self.p1) { _, responder in
            Task {
                for await _ in release.stream { break }
                responder.answer(BoardListAnswer.encode(p1Part))
            }
        }
        func p1Change(_ sequence: UInt64) throws {
            try setup.ownerConnection.publish("bb.feed.p1.bounty", payload: FeedEventFrame.encode(
                partition: 1, sequence: sequence, before: nil, after: StoredOrder.encoded(p1Order)))
        }
        try await setup.ownerConnection.flush()
        let watcher = Watcher()
        let subscription = try subscribe(setup, ["types": ["bounty"]], partitions: [Self.p0, Self.p1], watcher: watcher)
        try await eventually("p0's part in") { setup.followed.queue.sync { setup.followed.subscriptions[subscription]?.parts.count } == 1 }
        try p1Change(3)
        let during = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        // The owner publishes its change from its publishing queue, after the commit answered:
        // forwarded before `p1`'s next, so the node's numbers are known.
        try await eventually("p0's change forwarded") { setup.followed.queue.sync { setup.followed.position(of: .bounty) } == 2 }
        try p1Change(4)
        try await eventually("three changes forwarded") { setup.followed.queue.sync { setup.followed.position(of: .bounty) } == 3 }
        #expect(watcher.replies.withLock { $0 }.isEmpty && watcher.changes.withLock { $0 }.isEmpty, "nothing before every part is in")
        release.continuation.yield()
        try await eventually("the reply") { watcher.replies.withLock { $0.count } == 1 }
        let reply = try #require(watcher.reply)
        #expect(reply["total"] == .integer(5) && reply["seq"] == ["bounty": 0])
        guard case .array(let orders)? = reply["orders"] else {
            Issue.record("no orders in \(reply)")
            return
        }
        #expect(orders.count == 5 && orders.contains(["id": 1_000_001]), "both partitions' parts, merged")
        // p1's change 3 is in its part; p0's publish and p1's change 4 are in neither.
        try await eventually("the changes after the reply") { watcher.changes.withLock { $0.count } == 2 }
        let changes = watcher.changes.withLock { $0 }
        #expect(changes.map(\.boardSequence) == [2, 3] && changes[0].after.id == during)
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        try await eventually("a live change") { watcher.changes.withLock { $0.count } == 3 }
        #expect(watcher.changes.withLock { $0[2].boardSequence } == 4)
        setup.followed.queue.sync { setup.followed.unsubscribe(subscription) }
        #expect(setup.nodeMetrics.followedBoards.current == 0, "the board is no longer followed")
        p1Subscription.unsubscribe()
        owner.stopAll()
        await setup.stop()
    }

    @Test func aPartThatCannotBeHadFailsTheSubscriptionAndLeavesNothingWatched() async throws {
        let setup = try await BoardsSetup()
        let refusing = try PartitionRequests(connection: setup.ownerConnection).serve(Self.p1) { _, responder in
            responder.answer(Array(#"{"error":{"code":"bad_request","message":"no"},"id":1,"ok":false}"#.utf8))
        }
        try await setup.ownerConnection.flush()
        let refused = Watcher()
        _ = try subscribe(setup, ["types": ["bounty", "group"]], partitions: [Self.p1], watcher: refused)
        try await eventually("refused") { refused.replies.withLock { $0.count } == 1 }
        guard case .failure(.refused(let partition, let text))? = refused.replies.withLock({ $0.first }) else {
            Issue.record("\(refused.replies.withLock { $0 })")
            return
        }
        #expect(partition == Self.p1 && text.contains("bad_request"))
        let ownerless = Watcher()
        _ = try subscribe(setup, ["types": ["bounty"]], partitions: [PartitionID(space: .boards, index: 2)], watcher: ownerless,
                          policy: RoutePolicy(boundMilliseconds: 300))
        try await eventually("no owner") { ownerless.replies.withLock { $0.count } == 1 }
        guard case .failure(.route(.noOwner))? = ownerless.replies.withLock({ $0.first }) else {
            Issue.record("\(ownerless.replies.withLock { $0 })")
            return
        }
        #expect(setup.nodeMetrics.followedBoards.current == 0 && setup.followed.queue.sync { setup.followed.subscriptions.isEmpty })
        refusing.unsubscribe()
        await setup.stop()
    }

    /// `FEED_BENCHMARK=N`: N changes of one board, published as its owner does (both states of the
    /// order encoded) and forwarded by a node (decoded, numbered, one `FeedBroadcast` framed for
    /// its watchers), over one nats-server. Prints the owner's publish call, this process's CPU for
    /// the whole trip and the NATS server's, each per change.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FEED_BENCHMARK"] != nil))
    func measureAChangeOnTheFeedSubjects() async throws {
        let count = Int(ProcessInfo.processInfo.environment["FEED_BENCHMARK"] ?? "") ?? 100_000
        let setup = try await BoardsSetup()
        let harness = setup.harness
        let user = try await harness.logIn("13800138451")
        let id = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        let before = try #require(await harness.order(id))
        try await setup.watch(.bounty)
        let publisher = try #require(harness.app.publisher.boards.eventPublisher.withLock { $0 })
        let server = try #require(setup.nats.pid(of: 0))
        let forwarded = Atomic<Int>(0)
        let counting = FollowedBoards(connection: setup.nodeConnection, metrics: RelayMetrics(), logger: Logger(level: .error, sink: { _ in }),
                                      sink: FollowedBoards.Sink(deliver: { broadcast in
                                          _ = broadcast.message(for: .update)
                                          forwarded.add(1, ordering: .relaxed)
                                      }, gap: { _, _ in }))
        setup.unwatch(.bounty)
        try counting.queue.sync { () throws -> Void in
            do throws(NATSClientError) { try counting.watch(.bounty) } catch { throw error }
        }
        try await setup.nodeConnection.flush()
        let (processBefore, serverBefore) = (FollowedStreamsTests.processCPU(), FollowedStreamsTests.cpu(of: server))
        let clock = ContinuousClock()
        var publishing = Duration.zero
        var after = before
        for index in 0..<count {
            after.revision += 1
            let started = clock.now
            publisher.publish(sequence: UInt64(2 + index), before: before, after: after)
            publishing += clock.now - started
            if index % 1_000 == 999 { try await Task.sleep(for: .milliseconds(1)) }
        }
        try await eventually(timeoutSeconds: 60, "every change forwarded") { forwarded.load(ordering: .relaxed) == count }
        let (process, nats) = (FollowedStreamsTests.processCPU() - processBefore, FollowedStreamsTests.cpu(of: server) - serverBefore)
        func perChange(_ seconds: Double) -> String { String(format: "%.2f µs", seconds * 1e6 / Double(count)) }
        let publishSeconds = Double(publishing.components.seconds) + Double(publishing.components.attoseconds) / 1e18
        print("feed subjects x\(count): the owner's publish call \(perChange(publishSeconds)); this process (owner and node) "
              + "\(perChange(process)), the NATS server \(perChange(nats)) per change; \(StoredOrder.encoded(after).count)-byte orders")
        #expect(forwarded.load(ordering: .relaxed) == count)
        await setup.stop()
    }
}
