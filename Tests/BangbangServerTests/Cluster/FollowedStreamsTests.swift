// Personal streams followed on a node that does not number them, over a real nats-server: the
// account owner publishes each numbered event once on its user's subject, and a node passes every
// event after a device's number on to that device, in order and once, although the subject loses,
// repeats and reorders events on the way, the node's own connection drops, and the last events
// are lost with nothing after them. Events the owner no longer keeps are reported lost, once.
import BangbangCore
import Cluster
import Dispatch
import InboxProtocol
import Foundation
import NATSClient
import NATSTestSupport
import Synchronization
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(3))) struct FollowedStreamsTests {
    /// An account owner that publishes its users' events, and a node that follows them.
    final class FollowSetup: Sendable {
        let nats: NATSCluster
        let harness: ApplicationHarness
        let owner: OwnerRequests
        let ownerConnection: NATSConnection
        let nodeConnection: NATSConnection
        let publisher: PersonalEventPublisher
        let ownerMetrics = RelayMetrics()
        let nodeMetrics = RelayMetrics()
        let followed: FollowedStreams

        /// The node reads the user subjects under `nodePrefix`: `bb.user` straight from the owner,
        /// another when a relay stands between them.
        /// With `nodeKnowsOneServer`, the node's connection lists the first server only, so it
        /// stays away while that server is down.
        init(natsServers: Int = 1, nodeKnowsOneServer: Bool = false, nodePrefix: String = UserSubjects.standardPrefix) async throws {
            nats = try await NATSCluster.shared(size: natsServers)
            ownerConnection = try await connectClient(to: nats, first: natsServers - 1, name: "owner")
            var node = NATSConfiguration(servers: nodeKnowsOneServer ? [nats.addresses[0]] : nats.addresses, name: "session-node")
            (node.reconnectWaitMilliseconds, node.maxReconnectWaitMilliseconds) = (20, 200)
            node.usesAnnouncedServers = !nodeKnowsOneServer
            nodeConnection = NATSConnection(configuration: node)
            try await nodeConnection.connect()
            harness = try ApplicationHarness()
            harness.app.attach(to: [])
            owner = OwnerRequests(requests: PartitionRequests(connection: ownerConnection), app: harness.app,
                                  map: PartitionMap(partitionCount: 1))
            try owner.serve(PartitionID(space: .accounts, index: 0))
            publisher = PersonalEventPublisher(connection: ownerConnection, metrics: ownerMetrics)
            harness.app.publisher.accounts.eventPublisher.withLock { [publisher] in $0 = publisher }
            followed = FollowedStreams(connection: nodeConnection, requests: PartitionRequests(connection: nodeConnection),
                                       map: PartitionMap(partitionCount: 1), subjects: UserSubjects(prefix: nodePrefix),
                                       metrics: nodeMetrics, logger: Logger(level: .error, sink: { _ in }))
            try followed.start()
        }

        /// What the owner keeps of `user`'s stream.
        func kept(_ user: UserID) -> (last: UInt64, events: [(number: UInt64, message: [UInt8])]) {
            harness.app.publisher.accounts.streams.kept(for: user, after: 0, now: harness.clock.now)
        }

        /// One more event in `user`'s stream: an order published, or the last one cancelled.
        func change(_ user: UserID, open: inout [OrderID]) async throws {
            if let id = open.popLast() {
                try await harness.run(.cancel(reason: nil), on: id, by: user)
            } else {
                open.append(try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user))
            }
        }

        func stop() async {
            followed.stop()
            owner.stopAll()
            await nodeConnection.close()
            await ownerConnection.close()
            nats.stop()
        }
    }

    /// What one device here was sent.
    final class Device: Sendable {
        let received = Mutex<[(number: UInt64, message: [UInt8])]>([])
        let losses = Mutex<[String]>([])
        /// Only counts what it is sent, checking that the numbers run on (a benchmark's device).
        let isCounting: Bool
        private let counted = Atomic<UInt64>(0)

        init(counting: Bool = false) {
            isCounting = counting
        }

        var sink: FollowedStreams.Sink {
            FollowedStreams.Sink(deliver: { [self] events in
                guard !isCounting else {
                    for event in events where counted.add(1, ordering: .relaxed).newValue != event.number {
                        losses.withLock { $0.append("out of order: \(event.number)") }
                    }
                    return
                }
                received.withLock { $0 += events.map { ($0.number, $0.message.payload) } }
            }, lost: { [self] reason in losses.withLock { $0.append(reason) } })
        }

        var count: UInt64 { counted.load(ordering: .relaxed) }

        var numbers: [UInt64] { received.withLock { $0.map(\.number) } }
        var texts: [String] { received.withLock { $0.map { String(decoding: $0.message, as: UTF8.self) } } }
        var head: UInt64 { received.withLock { $0.last?.number ?? 0 } }
    }

    /// Between the owner's subjects and the node's: loses, repeats and holds back events (a later
    /// one overtakes it) at random, or loses every one; passes announcements unchanged.
    final class LossyRelay: @unchecked Sendable {
        // Confinement: `random`, `held` and `counts` are touched only on `queue`, where the
        // subscription delivers; `mode` is locked.
        enum Mode { case passing, lossy, losingEverything }
        let queue = DispatchQueue(label: "lossy-relay")
        let mode = Mutex(Mode.lossy)
        private var random = SeededGenerator(seed: 0x1055)
        private var held: (String, [UInt8])?
        private(set) var counts = (dropped: 0, repeated: 0, reordered: 0)
        private var subscription: NATSSubscription?
        let connection: NATSConnection

        init(connection: NATSConnection, to prefix: String) throws {
            self.connection = connection
            let source = UserSubjects.standardPrefix + "."
            subscription = try connection.subscribe(to: source + ">", deliveringOn: queue) { [unowned self] message in
                let subject = prefix + "." + message.subject.dropFirst(source.count)
                relay(subject, Array(message.payload), isEvent: !message.subject.hasSuffix(".owner"))
            }
        }

        private func relay(_ subject: String, _ payload: [UInt8], isEvent: Bool) {
            func send(_ subject: String, _ payload: [UInt8]) { try? connection.publish(subject, payload: payload) }
            switch isEvent ? mode.withLock({ $0 }) : .passing {
            case .losingEverything:
                counts.dropped += 1
                return
            case .passing:
                send(subject, payload)
            case .lossy:
                let roll = Double.random(in: 0..<1, using: &random)
                if roll < 0.2 {
                    counts.dropped += 1
                    return
                } else if roll < 0.3 {
                    counts.repeated += 1
                    send(subject, payload)
                    send(subject, payload)
                } else if roll < 0.4 && held == nil {
                    counts.reordered += 1
                    held = (subject, payload)
                    return
                } else {
                    send(subject, payload)
                }
            }
            if let (subject, payload) = held {
                held = nil
                send(subject, payload)
            }
        }

        var summary: (dropped: Int, repeated: Int, reordered: Int) { queue.sync { counts } }
    }

    @Test func theOwnerPublishesEachNumberedEventOnceOnItsUsersSubject() async throws {
        let setup = try await FollowSetup()
        let frames = Mutex<[PersonalEventFrame.Event]>([])
        let owners = Mutex<[String]>([])
        let listener = try await connectClient(to: setup.nats, name: "listener")
        _ = try listener.subscribe(to: "bb.user.>") { message in
            if message.subject == "bb.user.owner" { return owners.withLock { $0.append(String(decoding: message.payload, as: UTF8.self)) } }
            guard let frame = PersonalEventFrame.decode(message.payload) else {
                Issue.record("not an event: \(message.subject)")
                return
            }
            #expect(message.subject == "bb.user.\(frame.user % 4096)")
            frames.withLock { $0.append(PersonalEventFrame.Event(user: frame.user, number: frame.number, message: ArraySlice(Array(frame.message)))) }
        }
        try await listener.flush()
        let users = [try await setup.harness.logIn("13800138301"), try await setup.harness.logIn("13800138302")]
        var open: [[OrderID]] = [[], []]
        for round in 0..<6 { try await setup.change(users[round % 2], open: &open[round % 2]) }
        // Numbered once the commits are, on the publishing queue.
        try await eventually("three events in each stream") { users.allSatisfy { setup.kept($0).last == 3 } }
        let total: UInt64 = 6
        try await eventually("every numbered event published") { frames.withLock { $0.count } >= Int(total) }
        for user in users {
            let published = frames.withLock { $0 }.filter { $0.user == user.rawValue }
            let kept = setup.kept(user)
            #expect(published.map(\.number) == Array(1...kept.last), "each number once, in order")
            #expect(published.map { Array($0.message) } == kept.events.map(\.message), "the bytes the devices were sent")
        }
        #expect(setup.ownerMetrics.userEventsPublished.current == Int(total))
        setup.publisher.announce(PartitionID(space: .accounts, index: 0))
        try await eventually("the announcement heard") { owners.withLock { $0 } == ["a0"] }
        await listener.close()
        await setup.stop()
    }

    @Test func aNodePassesEveryEventOnOnceInOrderWhateverTheSubjectLoses() async throws {
        let setup = try await FollowSetup(nodePrefix: "lossy.user")
        let relayConnection = try await connectClient(to: setup.nats, name: "relay")
        let relay = try LossyRelay(connection: relayConnection, to: "lossy.user")
        // Every event as the owner published it (a stream keeps only its last 8 KiB).
        let published = Mutex<[UInt64: [UInt64: String]]>([:])
        _ = try relayConnection.subscribe(to: "bb.user.>") { message in
            guard let frame = PersonalEventFrame.decode(message.payload) else { return }
            published.withLock { $0[frame.user, default: [:]][frame.number] = String(decoding: frame.message, as: UTF8.self) }
        }
        try await relayConnection.flush()
        let users = [try await setup.harness.logIn("13800138311"), try await setup.harness.logIn("13800138312")]
        let (first, second, late) = (Device(), Device(), Device())
        _ = setup.followed.follow(users[0], after: 0, sink: first.sink)
        _ = setup.followed.follow(users[1], after: 0, sink: second.sink)
        var open: [[OrderID]] = [[], []]
        var lateStart: UInt64 = 0
        for round in 0..<40 {
            try await setup.change(users[round % 2], open: &open[round % 2])
            if round == 20 {
                // A second device of the first user, resuming from a few events back.
                lateStart = 6
                _ = setup.followed.follow(users[0], after: lateStart, sink: late.sink)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        // The last events are lost with nothing after them to show it; the owner's announcement
        // (a new owner's first act) makes every device ask.
        relay.mode.withLock { $0 = .losingEverything }
        for index in 0..<2 { try await setup.change(users[index], open: &open[index]) }
        try await eventually("21 events in each stream") { users.allSatisfy { setup.kept($0).last == 21 } }
        try await relayConnection.flush()
        setup.publisher.announce(PartitionID(space: .accounts, index: 0))
        for (device, user, start) in [(first, users[0], UInt64(0)), (second, users[1], 0), (late, users[0], lateStart)] {
            let kept = setup.kept(user)
            try await eventually("the device reaches the owner's last number") { device.head >= kept.last }
            #expect(device.numbers == Array(start + 1...kept.last), "every number after the start once, in order")
            let sent = published.withLock { $0[user.rawValue] ?? [:] }
            #expect(device.texts == (start + 1...kept.last).map { sent[$0] ?? "not published" }, "the bytes the owner published")
            #expect(device.losses.withLock { $0 }.isEmpty)
        }
        let summary = relay.summary
        #expect(summary.dropped > 2 && summary.repeated > 0 && summary.reordered > 0, "\(summary)")
        #expect(setup.nodeMetrics.streamQuestions.current > 3, "the gaps were asked for")
        #expect(setup.nodeMetrics.followedStreams.current == 3 && setup.nodeMetrics.streamLosses.current == 0)
        await relayConnection.close()
        await setup.stop()
    }

    @Test func eventsLostWhileTheNodesConnectionWasDownAreAskedForWhenItIsBack() async throws {
        let setup = try await FollowSetup(natsServers: 3, nodeKnowsOneServer: true)
        let user = try await setup.harness.logIn("13800138321")
        var open: [OrderID] = []
        try await setup.change(user, open: &open)
        let (device, other) = (Device(), Device())
        _ = setup.followed.follow(user, after: 0, sink: device.sink)
        _ = setup.followed.follow(user, after: 0, sink: other.sink)
        try await eventually("the devices have the first event") { device.head == 1 && other.head == 1 }
        #expect(setup.nodeMetrics.streamQuestions.current == 1, "two devices that need the same events share a question")
        // The node's only server goes; what the owner publishes meanwhile reaches no subscriber.
        setup.nats.kill(0)
        for _ in 0..<3 { try await setup.change(user, open: &open) }
        try await eventually("the owner numbered them") { setup.kept(user).last == 4 }
        let last = setup.kept(user).last
        try await Task.sleep(for: .milliseconds(300))
        #expect(device.head == 1, "nothing reached the node while its server was down")
        try setup.nats.relaunch(0)
        try await eventually(timeoutSeconds: 20, "the device has what was published while the node was away") {
            device.head >= last
        }
        try await eventually("the other device too") { other.head >= last }
        for each in [device, other] { #expect(each.numbers == Array(1...last) && each.losses.withLock { $0 }.isEmpty) }
        #expect(setup.nodeConnection.reconnectCount >= 1)
        // Asked when the connection came back (once for both devices, and once more if an answer
        // was lost while the restarted server's routes came up: not counted exactly here).
        #expect(setup.nodeMetrics.streamQuestions.current >= 2, "asked when the connection came back")
        await setup.stop()
    }

    @Test func eventsTheOwnerNoLongerKeepsAreReportedLostOnceAndTheDeviceForgotten() async throws {
        let setup = try await FollowSetup()
        let user = try await setup.harness.logIn("13800138331")
        var open: [OrderID] = []
        for _ in 0..<40 { try await setup.change(user, open: &open) }
        try await eventually("forty events numbered") { setup.kept(user).last == 40 }
        let kept = setup.kept(user)
        #expect((kept.events.first?.number ?? 0) > 1, "the first events are no longer kept")
        let (stale, recent, again) = (Device(), Device(), Device())
        _ = setup.followed.follow(user, after: 0, sink: stale.sink)
        let recentHandle = setup.followed.follow(user, after: kept.last - 5, sink: recent.sink)
        let againHandle = setup.followed.follow(user, after: kept.last, sink: again.sink)
        try await eventually("the stale device told") { !stale.losses.withLock { $0 }.isEmpty }
        try await eventually("the recent device has the last five") { recent.head == kept.last }
        #expect(stale.losses.withLock { $0 }.count == 1 && stale.numbers.isEmpty, "told once, sent nothing")
        #expect(recent.numbers == Array(kept.last - 4...kept.last) && recent.losses.withLock { $0 }.isEmpty)
        #expect(setup.nodeMetrics.streamLosses.current == 1)
        try await setup.change(user, open: &open)
        try await eventually("both live devices have the next") { recent.head == kept.last + 1 && again.head == kept.last + 1 }
        #expect(stale.numbers.isEmpty, "nothing after the loss")
        #expect(setup.followed.queue.sync { setup.followed.counts } == (2, 1))
        setup.followed.unfollow(recentHandle)
        #expect(setup.followed.queue.sync { setup.followed.counts } == (1, 1), "the bucket is kept for the user's other device")
        setup.followed.unfollow(againHandle)
        setup.followed.unfollow(againHandle)
        #expect(setup.followed.queue.sync { setup.followed.counts } == (0, 0))
        #expect(setup.nodeMetrics.followedStreams.current == 0)
        await setup.stop()
    }

    /// `FOLLOW_BENCHMARK=N`: N events of 100 users, each user followed by two devices here, published
    /// as an owner does and passed on by a node, over one nats-server. Prints what one event costs:
    /// the owner's publish call, this process's CPU for the whole trip (the owner's and the node's
    /// NATS loops, the node's queue: both ends) and the NATS server's, each per event published.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FOLLOW_BENCHMARK"] != nil))
    func measureAnEventOnTheUserSubjects() async throws {
        let count = Int(ProcessInfo.processInfo.environment["FOLLOW_BENCHMARK"] ?? "") ?? 100_000
        let setup = try await FollowSetup()
        let users = (1...100).map { UserID(UInt64(1_000 + $0)) }
        let devices = users.flatMap { user in (0..<2).map { _ in (user, Device(counting: true)) } }
        for (user, device) in devices { _ = setup.followed.follow(user, after: 0, sink: device.sink) }
        try await eventually("every user asked after") { setup.nodeMetrics.streamQuestions.current == users.count }
        try await Task.sleep(for: .milliseconds(200))
        // A feed-sized personal event, as `order.changed` is.
        let message = Array(("{\"data\":{\"change\":\"published\",\"order\":{" + String(repeating: "x", count: 400) + "}},"
                             + "\"event\":\"order.changed\",\"seq\":1}").utf8)
        let server = try #require(setup.nats.pid(of: 0))
        let (processBefore, serverBefore) = (Self.processCPU(), Self.cpu(of: server))
        let clock = ContinuousClock()
        var publishing = Duration.zero
        for index in 0..<count {
            let started = clock.now
            setup.publisher.publish(user: users[index % users.count], number: UInt64(index / users.count + 1), message: message)
            publishing += clock.now - started
            if index % 1_000 == 999 { try await Task.sleep(for: .milliseconds(1)) }
        }
        let perUser = UInt64(count / users.count)
        try await eventually(timeoutSeconds: 60, "every device has every event") { devices.allSatisfy { $0.1.count == perUser } }
        let (process, nats) = (Self.processCPU() - processBefore, Self.cpu(of: server) - serverBefore)
        func perEvent(_ seconds: Double) -> String { String(format: "%.2f µs", seconds * 1e6 / Double(count)) }
        print("user subjects x\(count) (2 devices per user): the owner's publish call \(perEvent(Double(publishing.components.attoseconds) / 1e18 + Double(publishing.components.seconds))); "
              + "this process (owner and node) \(perEvent(process)), the NATS server \(perEvent(nats)) per event; "
              + "questions \(setup.nodeMetrics.streamQuestions.current - devices.count), losses \(setup.nodeMetrics.streamLosses.current)")
        #expect(setup.nodeMetrics.streamLosses.current == 0)
        await setup.stop()
    }

    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func cpu(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return (Double(fields[11]) ?? 0) / 100 + (Double(fields[12]) ?? 0) / 100
    }
}
