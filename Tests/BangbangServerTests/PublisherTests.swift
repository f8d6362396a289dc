// The publisher's two halves and the route between them: a record's personal events leave only
// through the route, marked with their source partition and journal record, and the account half
// numbers exactly what it receives, in the order it receives it. Between nodes the route is the
// inbox; these tests hold the shape it must fit.
@testable import BangbangCore
import BangbangProtocol
import Dispatch
import Foundation
import InboxProtocol
import Synchronization
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct PublisherTests {
    private static let now = Timestamp(milliseconds: 1_767_225_600_000)
    private static let publisherID = UserID(1)
    private static let runnerID = UserID(2)

    private final class RecordingRoute: PersonalEventRoute {
        struct Sent: Equatable {
            let source: InboxSource
            let journalSequence: UInt64
            let at: Int64
            let events: [InboxEvent]
        }

        let sent = Mutex<[Sent]>([])

        func send(_ events: [InboxEvent], from source: InboxSource, journalSequence: UInt64, at: Int64,
                  received: (@Sendable () -> Void)?) {
            sent.withLock { $0.append(Sent(source: source, journalSequence: journalSequence, at: at, events: events)) }
            received?()
        }
    }

    /// An express order published by user 1, then accepted by user 2.
    private static func publishedAndAccepted() throws -> [AppliedOrderChange] {
        var shard = BoardShard(index: 0)
        var random = SystemRandomNumberGenerator()
        let draft = OrderDraft(campus: "North", deadline: Timestamp(milliseconds: now.milliseconds + 3_600_000), tip: 300,
                               wantsDeliveryCode: false,
                               details: .express(ExpressDetails(pickupStation: "S", pickupCode: nil, parcelSize: .small,
                                                                dropOffPlace: "D", dropOffRoom: nil, contactPhone: nil)))
        let published = shard.apply(try shard.decidePublish(draft, by: publisherID, now: now, rules: OrderRules(), using: &random))
        let accept = try shard.decide(.accept(isVerifiedRunner: true), on: published.after.id, by: runnerID,
                                      now: Timestamp(milliseconds: now.milliseconds + 1_000), rules: OrderRules())
        return [published, shard.apply(accept)]
    }

    private static var approval: AccountEvent {
        .verificationDecided(.init(user: runnerID, administrator: UserID(9), isApproved: true, reason: nil,
                                   at: Timestamp(milliseconds: now.milliseconds + 2_000)))
    }

    @Test func personalEventsLeaveOnlyThroughTheRouteMarkedWithTheirRecord() throws {
        let route = RecordingRoute()
        let publisher = Publisher(queue: DispatchQueue(label: "test.publishing"), route: route)
        let changes = try Self.publishedAndAccepted()
        publisher.publish(Announcement(changes[0], actorView: nil, includingFeed: false), from: Publisher.boardsSource,
                          journalSequence: 11)
        publisher.publish(Announcement(changes[1], actorView: nil, includingFeed: false), from: Publisher.boardsSource,
                          journalSequence: 12)
        publisher.publish(Announcement(Self.approval, at: Timestamp(milliseconds: Self.now.milliseconds + 2_000)),
                          from: Publisher.accountsSource, journalSequence: 13)

        let sent = route.sent.withLock { $0 }
        try #require(sent.count == 3)
        #expect(sent.map(\.source) == [Publisher.boardsSource, Publisher.boardsSource, Publisher.accountsSource])
        #expect(sent.map(\.journalSequence) == [11, 12, 13])
        #expect(sent.map(\.at) == [0, 1_000, 2_000].map { Self.now.milliseconds + $0 })
        #expect(sent[0].events.map(\.user) == [1])
        #expect(Set(sent[1].events.map(\.user)) == [1, 2])
        for (change, record) in zip(changes, sent) {
            for event in record.events {
                #expect(event.name == "order.changed")
                let view = OrderView(change.after, viewer: UserID(event.user))
                #expect(event.data == OrderWire.changedData(change: OrderNotifications.changeName(change.event.change),
                                                            view: view))
            }
        }
        #expect(sent[2].events == [InboxEvent(user: 2, name: "runner.verification_decided",
                                              data: JSONWriter.encode(["status": "approved"]))])
        // The board half numbered both changes; the account half heard nothing but the runner's
        // approval, which is its own fact.
        #expect(publisher.boards.sequence(of: .express) == 2)
        #expect(publisher.accounts.streams.snapshot().isEmpty)
        #expect(publisher.accounts.isApprovedRunner(Self.runnerID))
    }

    @Test func theAccountHalfNumbersWhatItReceivesInOrder() throws {
        let publisher = Publisher(queue: DispatchQueue(label: "test.publishing"))
        let changes = try Self.publishedAndAccepted()
        let announcements = [Announcement(changes[0], actorView: nil, includingFeed: false),
                             Announcement(changes[1], actorView: nil, includingFeed: false),
                             Announcement(Self.approval, at: Timestamp(milliseconds: Self.now.milliseconds + 2_000))]
        for (offset, announcement) in announcements.enumerated() {
            publisher.publish(announcement, from: offset < 2 ? Publisher.boardsSource : Publisher.accountsSource,
                              journalSequence: UInt64(offset + 1))
        }
        let streams = publisher.accounts.streams.snapshot()
        // User 1: published, accepted. User 2: accepted, then approved as a runner.
        var expected: [UInt64: [[UInt8]]] = [:]
        for announcement in announcements {
            for event in announcement.personal {
                let sequence = UInt64(expected[event.user, default: []].count + 1)
                expected[event.user, default: []].append(
                    EventMessage.personal(name: event.name, sequence: sequence, encodedData: event.data))
            }
        }
        #expect(expected.mapValues(\.count) == [1: 2, 2: 2])
        #expect(streams.count == 2)
        for (user, messages) in expected {
            let stream = try #require(streams[UserID(user)])
            #expect(stream.lastSequence == UInt64(messages.count))
            #expect(stream.live.map(\.message) == messages)
        }
    }

    @Test func anActorsOwnViewIsReusedAndReadsAsAnyOther() throws {
        let changes = try Self.publishedAndAccepted()
        let accepted = changes[1]
        let actorView = EncodedOrderView(viewer: Self.runnerID,
                                         json: OrderWire.encoded(OrderView(accepted.after, viewer: Self.runnerID)))
        let reused = Announcement(accepted, actorView: actorView, includingFeed: true)
        let fresh = Announcement(accepted, actorView: nil, includingFeed: false)
        #expect(reused.personal == fresh.personal)
        #expect(reused.board?.feedData != nil && fresh.board?.feedData == nil)
    }

    /// What follows an account partition's own record (a login's reply) runs once its events
    /// are numbered, and at once for a record that tells nobody.
    @Test func whatFollowsARecordRunsOnceItsEventsAreNumbered() {
        let publisher = Publisher(queue: DispatchQueue(label: "test.publishing"))
        let seen = Mutex<[UInt64?]>([])
        let streams = publisher.accounts.streams
        publisher.publish(Announcement(Self.approval, at: Self.now), from: Publisher.accountsSource, journalSequence: 1) {
            seen.withLock { $0.append(streams.snapshot()[Self.runnerID]?.lastSequence) }
        }
        let silent = AccountEvent.verificationSubmitted(.init(user: Self.runnerID, realName: "Li Lei", studentID: "2026001",
                                                              school: "North", at: Self.now))
        publisher.publish(Announcement(silent, at: Self.now), from: Publisher.accountsSource, journalSequence: 2) {
            seen.withLock { $0.append(nil) }
        }
        #expect(seen.withLock { $0 } == [1, nil])
    }

    /// The board partition's log and the account partition's, over one journal: each record's
    /// personal events leave marked with the partition whose log appended it, in journal order,
    /// and both logs count their commits in flight in the one tracking they share.
    @Test func eachLogAnnouncesItsRecordsAsItsPartitions() async throws {
        let queue = DispatchQueue(label: "test.publishing")
        let route = RecordingRoute()
        let publisher = Publisher(queue: queue, route: route)
        let directory = try makeTemporaryDirectory("bangbang-logs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let archiver = Archiver(archive: try Application.openArchive(in: directory), logger: Logger(level: .error, sink: { _ in }),
                                metrics: ServerMetrics())
        let journal = MemoryJournal(stream: MemoryStream(), after: 0, queue: queue)
        let tracking = CommitTracking()
        let boards = CommitLog(source: Publisher.boardsSource, journal: journal, tracking: tracking, publisher: publisher,
                               archiver: archiver)
        let accounts = CommitLog(source: Publisher.accountsSource, journal: journal, tracking: tracking, publisher: publisher,
                                 archiver: archiver)
        let changes = try Self.publishedAndAccepted()
        let durable = Mutex(0)
        let count: @Sendable (Result<Void, DomainError>) -> Void = { result in
            if case .success = result { durable.withLock { $0 += 1 } }
        }
        boards.append(.order(shard: 0, changes[0].event), announcing: Announcement(changes[0], actorView: nil, includingFeed: false),
                      onDurable: count)
        accounts.append(.account(Self.approval), announcing: Announcement(Self.approval, at: Self.now), onDurable: count)
        boards.append(.order(shard: 0, changes[1].event), announcing: Announcement(changes[1], actorView: nil, includingFeed: false),
                      onDurable: count)
        #expect(await eventually { durable.withLock { $0 } == 3 && tracking.withLock { $0.inFlight } == 0 })
        let sent = route.sent.withLock { $0 }
        #expect(sent.map(\.source) == [Publisher.boardsSource, Publisher.accountsSource, Publisher.boardsSource])
        #expect(sent.map(\.journalSequence) == [1, 2, 3])
        #expect(publisher.boards.sequence(of: .express) == 2)
    }
}
