// Journal entries in the keyed binary form: every event kind round-trips, the form tolerates
// added and removed optional fields, corrupt records are errors rather than traps, and journals
// written in the original JSON form still recover.
import Foundation
import Journal
import Testing
import TestSupport
@testable import BangbangCore
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

/// Real events of every kind, made by the domain's decide functions.
private enum Events {
    static let now = Timestamp(milliseconds: 1_767_225_600_000)
    static let hour: Int64 = 3_600_000
    static let publisher = UserID(1)
    static let runner = UserID(2)

    static let drafts: [OrderDraft] = [
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: hour), tip: 300, wantsDeliveryCode: true,
                   details: .express(ExpressDetails(pickupStation: "菜鸟驿站 3", pickupCode: "8-2-1043", parcelSize: .medium,
                                                    dropOffPlace: "Dorm 7", dropOffRoom: "512", contactPhone: "+8613812345678"))),
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: hour), tip: 200,
                   details: .purchase(PurchaseDetails(items: [PurchaseItem(name: "Oat milk", quantity: 2, note: "cold"),
                                                              PurchaseItem(name: "Bread", quantity: 1)],
                                                      store: nil, goodsBudget: 2_000, dropOffPlace: "Library", dropOffRoom: "B2-14"))),
        OrderDraft(campus: "south", deadline: now.adding(milliseconds: hour), tip: 500,
                   details: .bounty(BountyDetails(title: "Lost umbrella", description: "Black \"Totes\",\nnear the gym\u{1}"))),
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: 2 * hour), tip: 0,
                   details: .group(GroupDetails(kind: .carpool, subject: "Campus to airport", closesAt: now.adding(milliseconds: hour),
                                                capacity: 3, minimumFill: 2, pricePerShare: 3_000))),
        // Texts of every length around the direct writer's buffer (256 bytes) and its cut-off for
        // text written straight through (128).
        OrderDraft(campus: String(repeating: "c", count: 60), deadline: now.adding(milliseconds: hour), tip: 1,
                   details: .bounty(BountyDetails(title: String(repeating: "题", count: 43),
                                                  description: String(repeating: "long \"text\" ", count: 70),
                                                  place: String(repeating: "p", count: 60)))),
    ]

    /// One published order of each type, then one event of every other change on the first.
    static func orderEvents() throws -> [OrderEvent] {
        var shard = BoardShard(index: 5)
        var random = SeededGenerator(seed: 42)
        var events: [OrderEvent] = []
        for draft in drafts {
            let event = try shard.decidePublish(draft, by: publisher, now: now, rules: OrderRules(), using: &random)
            _ = shard.apply(event)
            events.append(event)
        }
        let id = events[0].orderID
        let accept = try shard.decide(.accept(isVerifiedRunner: true), on: id, by: runner, now: now, rules: OrderRules())
        events.append(accept)
        let later = now.adding(milliseconds: 60_000)
        let changes: [OrderChange] = [
            .progressed(to: .pickedUp), .delivered(autoConfirmAt: later), .delivered(autoConfirmAt: nil),
            .confirmed(automatic: true), .abandoned(runner: runner),
            .cancelled(Cancellation(cause: .quorumNotReached, reason: nil, fee: 0, runner: nil)),
            .cancelled(Cancellation(cause: .publisher, reason: "不要了", fee: 150, runner: runner)),
            .expired, .tipRaised(to: Int64.max), .joined(UserID(UInt64.max)), .left(UserID(0)), .closedForJoining,
            .groupCompleted(automatic: false), .rated(byPublisher: true, Rating(stars: 5, comment: "", at: later)),
            .movedToArchive,
        ]
        for change in changes {
            events.append(OrderEvent(orderID: id, at: later, actor: change == .expired ? nil : runner, change: change,
                                     notify: [publisher, runner]))
        }
        return events
    }

    /// Every kind of account event, as in the domain's replay tests.
    static func accountEvents() throws -> [AccountEvent] {
        var store = AccountStore(policy: AccountPolicy(campuses: ["东校区"],
                                                       administratorPhones: [PhoneNumber(rawValue: "+8613000000000")]))
        var random = SeededGenerator(seed: 2026)
        var clock = now
        var events: [AccountEvent] = []
        func commit(_ event: AccountEvent) {
            store.apply(event)
            events.append(event)
        }
        func run(_ decision: AccountDecision) throws {
            for event in decision.throttle { store.apply(event) }
            commit(try decision.outcome.get())
        }
        func logIn(_ phone: String, device: String?) throws -> Session {
            let issue = try store.decideCodeRequest(phone: phone, purpose: .login, requester: nil, clientIP: "10.0.0.1",
                                                    now: clock, using: &random)
            store.apply(.codeIssued(issue))
            try run(store.decideCodeLogin(phone: phone, code: issue.code, device: device, now: clock, using: &random))
            clock = clock.adding(milliseconds: 61_000)
            return try #require(events.last?.openedSession)
        }
        let admin = try logIn("13000000000", device: "desk").user
        let session = try logIn("13800138000", device: "phone")
        let user = session.user
        let helper = try logIn("13700137000", device: nil).user
        _ = try logIn("13800138000", device: "pad")
        commit(try store.decideSetPassword(user: user, passwordHash: "scrypt$1$8$1$AA==$AA==", now: clock))
        commit(try store.decideRevokeSession(user: user, session: session.id, now: clock))
        commit(try store.decideProfileUpdate(user: user, update: .init(nickname: "小明", avatarURL: "https://a.example/x.png",
                                                                       gender: .male, campus: "东校区", dorm: "3-101", bio: "hi"),
                                             now: clock))
        let code = try store.decideCodeRequest(phone: "13900139000", purpose: .changePhone, requester: user,
                                               clientIP: "10.0.0.1", now: clock, using: &random)
        store.apply(.codeIssued(code))
        try run(store.decidePhoneChange(user: user, newPhone: "13900139000", code: code.code, now: clock))
        commit(try store.decideVerificationSubmission(user: user, realName: "张三", studentID: "42", school: "东校区", now: clock))
        commit(try store.decideVerificationRejection(administrator: admin, user: user, reason: "blurry", now: clock))
        commit(try store.decideAdministratorGrant(by: admin, to: helper, now: clock))
        commit(try store.decideAdministratorRevocation(by: admin, from: helper, now: clock))
        commit(try store.decideFeedback(user: user, text: "great", contact: nil, now: clock))
        // A phone of this partition taken by a user of another (several pairs), then given up.
        let claimed = AccountEvent.PhoneClaimChange(phone: PhoneNumber(rawValue: "+8613600136000"), user: UserID(1_000_001), at: clock)
        commit(.phoneClaimed(claimed))
        commit(.phoneReleased(claimed))
        clock = clock.adding(milliseconds: 31 * 24 * 3_600_000)
        commit(try #require(store.decideSessionPurge(now: clock)))
        return events
    }

    static func kind(of value: some Any) -> String {
        String(String(describing: value).prefix { $0 != "(" })
    }
}

@Suite struct JournalEntryEncodingTests {
    private func roundTrip(_ entry: JournalEntry) throws -> JournalEntry {
        let bytes = entry.encoded()
        #expect(bytes.first == JournalEntry.keyedBinaryFormatTag)
        return try JournalEntry.decode(bytes)
    }

    @Test func everyOrderChangeRoundTrips() throws {
        let events = try Events.orderEvents()
        let kinds = Set(events.map { Events.kind(of: $0.change) })
        #expect(kinds.count == 15, "every OrderChange case should be covered: \(kinds.sorted())")
        for event in events {
            guard case .order(let shard, let decoded) = try roundTrip(.order(shard: 5, event)) else {
                Issue.record("an order entry decoded as another kind")
                continue
            }
            #expect(shard == 5)
            #expect(decoded == event)
        }
    }

    /// Order records are written directly, not through Codable; the bytes must be the same.
    @Test func orderRecordsAreWrittenExactlyAsCodableWritesThem() throws {
        var events = try Events.orderEvents()
        // Every optional member of an order present, on a published order of each type.
        for event in events.prefix(4) {
            guard case .published(var order) = event.change else { continue }
            order.runner = UserID(9)
            order.acceptedAt = Events.now.adding(milliseconds: 1)
            order.autoConfirmAt = Events.now.adding(milliseconds: 2)
            order.deliveryCode = order.deliveryCode ?? "0042"
            order.participants = [UserID(3), UserID(UInt64.max)]
            order.timeline.append(TimelineEntry(status: .cancelled, at: Events.now, actor: nil, note: "quorum \"not\" reached"))
            order.cancellation = Cancellation(cause: .publisher, reason: "plans changed", fee: -5, runner: UserID(9))
            order.ratingByPublisher = Rating(stars: 4, comment: "快", at: Events.now)
            order.ratingByRunner = Rating(stars: 1, comment: "", at: Events.now)
            order.tip = Int64.min
            order.revision = Int.max
            var full = event
            full.change = .published(order)
            full.actor = nil
            full.notify = []
            events.append(full)
        }
        for event in events {
            for shard in [0, 5, 1023] {
                let entry = JournalEntry.order(shard: shard, event)
                #expect(entry.encoded() == entry.encodedThroughCodable(usesDirectWriters: false), "\(Events.kind(of: event.change)) differs")
            }
        }
    }

    @Test func everyAccountEventRoundTrips() throws {
        let events = try Events.accountEvents()
        let kinds = Set(events.map { Events.kind(of: $0) })
        #expect(kinds.count == 13, "every AccountEvent case should be covered: \(kinds.sorted())")
        for event in events {
            guard case .account(let decoded) = try roundTrip(.account(event)) else {
                Issue.record("an account entry decoded as another kind")
                continue
            }
            #expect(decoded == event)
        }
    }

    @Test func originalJSONRecordsStillDecode() throws {
        for event in try Events.orderEvents() {
            let bytes = JournalEntry.order(shard: 2, event).encodedAsJSON()
            #expect(bytes.first == JournalEntry.jsonFormatTag)
            guard case .order(2, let decoded) = try JournalEntry.decode(bytes) else {
                Issue.record("a JSON order entry decoded wrongly")
                continue
            }
            #expect(decoded == event)
        }
        for event in try Events.accountEvents() {
            guard case .account(let decoded) = try JournalEntry.decode(JournalEntry.account(event).encodedAsJSON()) else {
                Issue.record("a JSON account entry decoded wrongly")
                continue
            }
            #expect(decoded == event)
        }
    }

    @Test func encodingIsDeterministic() throws {
        for event in try Events.orderEvents() {
            #expect(JournalEntry.order(shard: 1, event).encoded() == JournalEntry.order(shard: 1, event).encoded())
        }
    }

    @Test func binaryFormIsSmallerThanJSON() throws {
        let publish = try Events.orderEvents()[0]
        #expect(JournalEntry.order(shard: 0, publish).encoded().count < JournalEntry.order(shard: 0, publish).encodedAsJSON().count)
    }

    @Test func unknownFormatTagAndEmptyRecordAreRejected() {
        #expect(throws: JournalEntryError.self) { try JournalEntry.decode([0x03, 0x07, 0x00]) }
        #expect(throws: JournalEntryError.self) { try JournalEntry.decode([]) }
    }

    @Test func everyTruncationOfARecordIsAnError() throws {
        let bytes = JournalEntry.order(shard: 3, try Events.orderEvents()[1]).encoded()
        for length in 1..<bytes.count {
            #expect(throws: (any Error).self) { try JournalEntry.decode(Array(bytes[..<length])) }
        }
        #expect(throws: (any Error).self) { try JournalEntry.decode(bytes + [0x00]) }
    }

    @Test func corruptBytesAreErrorsNotTraps() throws {
        let bytes = JournalEntry.order(shard: 3, try Events.orderEvents()[0]).encoded()
        for index in 1..<bytes.count {
            for replacement: UInt8 in [0x00, 0x05, 0x07, 0x08, 0x80, 0xFF] {
                var corrupt = bytes
                corrupt[index] = replacement
                _ = try? JournalEntry.decode(corrupt)
            }
        }
        // Nesting past the limit.
        let deep = [JournalEntry.keyedBinaryFormatTag] + Array(repeating: KeyedBinaryTag.unkeyed, count: 10_000)
        #expect(throws: DecodingError.self) { try JournalEntry.decode(deep) }
    }
}

// MARK: Schema evolution: keyed like JSON, so optional fields can come and go.

private struct RecordVersion1: Codable, Equatable {
    var id: UInt64
    var name: String
}

private struct RecordVersion2: Codable, Equatable {
    var id: UInt64
    var name: String
    var note: String?
    var tags: [String]?
}

private struct Extremes: Codable, Equatable {
    var smallest: Int64
    var largest: Int64
    var unsignedLargest: UInt64
    var small: Int8
    var ratio: Double
    var flags: [Bool]
    var nested: [[Int]]
    var nothing: String?
    var byName: [String: Int]
    var byNumber: [Int: String]
    var empty: [String]
}

@Suite struct KeyedBinaryCodingTests {
    private func encode(_ value: some Encodable) throws -> [UInt8] {
        try KeyedBinaryEncoder.encode(value, after: 0xAA)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        try KeyedBinaryDecoder.decode(type, from: bytes.dropFirst())
    }

    @Test func recordWithoutANewOptionalFieldDecodesItAsNil() throws {
        let old = RecordVersion1(id: 7, name: "seven")
        let read = try decode(RecordVersion2.self, try encode(old))
        #expect(read == RecordVersion2(id: 7, name: "seven", note: nil, tags: nil))
    }

    @Test func olderReaderIgnoresFieldsItDoesNotKnow() throws {
        let new = RecordVersion2(id: 8, name: "eight", note: "n", tags: ["a", "b"])
        #expect(try decode(RecordVersion1.self, try encode(new)) == RecordVersion1(id: 8, name: "eight"))
    }

    @Test func missingRequiredFieldIsKeyNotFound() throws {
        struct NameOnly: Codable { var name: String }
        #expect(throws: DecodingError.self) { try decode(RecordVersion1.self, try encode(NameOnly(name: "x"))) }
    }

    @Test func boundaryValuesRoundTrip() throws {
        let value = Extremes(smallest: .min, largest: .max, unsignedLargest: .max, small: -128, ratio: -0.1,
                             flags: [true, false], nested: [[], [Int.min, 0, 1]], nothing: nil,
                             byName: ["": 1, "b": 2], byNumber: [-1: "minus", 300: "big"], empty: [])
        let bytes = try encode(value)
        #expect(bytes.first == 0xAA)
        #expect(try decode(Extremes.self, bytes) == value)
    }

    @Test func integerThatDoesNotFitIsAnError() throws {
        struct Wide: Codable { var value: Int64 }
        struct Narrow: Codable { var value: Int8 }
        struct Unsigned: Codable { var value: UInt64 }
        #expect(throws: DecodingError.self) { try decode(Narrow.self, try encode(Wide(value: 128))) }
        #expect(throws: DecodingError.self) { try decode(Unsigned.self, try encode(Wide(value: -1))) }
        #expect(try decode(Unsigned.self, try encode(Wide(value: 5))).value == 5)
    }

    @Test func typeMismatchIsAnError() throws {
        struct Text: Codable { var value: String }
        struct Number: Codable { var value: Int }
        #expect(throws: DecodingError.self) { try decode(Number.self, try encode(Text(value: "1"))) }
    }

    @Test func overlongIntegerIsRejected() throws {
        let bytes: [UInt8] = [0xAA, KeyedBinaryTag.unsigned] + Array(repeating: 0xFF, count: 10) + [0x01]
        #expect(throws: DecodingError.self) { try decode(UInt64.self, bytes) }
        let largest: [UInt8] = [0xAA, KeyedBinaryTag.unsigned] + Array(repeating: 0xFF, count: 9) + [0x01]
        #expect(try decode(UInt64.self, largest) == .max)
    }
}

// MARK: Recovery of a data directory written by a server that stored JSON records.

@Suite struct LegacyJournalRecoveryTests {
    private static func makeApplication(directory: String) throws -> Application {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory
        configuration.fsyncPolicy = .never
        configuration.shardsPerType = 2
        let logger = Logger(level: .error, sink: { _ in })
        return try Application(configuration: configuration, logger: logger, metrics: ServerMetrics(),
                               clock: { Events.now }, sms: DevelopmentSMSProvider(logger: logger, revealsCodes: false))
    }

    private static func write(_ payloads: [[UInt8]], to directory: String) throws {
        let (journal, _) = try WriteAheadLog.open(directory: directory, configuration: JournalConfiguration(syncPolicy: .always))
        let written = DispatchGroup()
        for payload in payloads {
            written.enter()
            _ = journal.append(payload) { result in
                if case .failure(let error) = result { Issue.record("append failed: \(error)") }
                written.leave()
            }
        }
        written.wait()
        try journal.close()
    }

    @Test func journalOfJSONAndBinaryRecordsRecovers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-legacy-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let accounts = try Events.accountEvents()
        var shard = BoardShard(index: 1)
        var random = SeededGenerator(seed: 9)
        let published = try shard.decidePublish(Events.drafts[0], by: Events.publisher, now: Events.now,
                                                rules: OrderRules(), using: &random)
        _ = shard.apply(published)
        let accept = try shard.decide(.accept(isVerifiedRunner: true), on: published.orderID, by: Events.runner,
                                      now: Events.now, rules: OrderRules())
        // The old server wrote everything as JSON; the new one appends binary records after it.
        var payloads = accounts.map { JournalEntry.account($0).encodedAsJSON() }
        payloads.append(JournalEntry.order(shard: 1, published).encodedAsJSON())
        payloads.append(JournalEntry.order(shard: 1, accept).encoded())
        try Self.write(payloads, to: directory)

        let app = try Self.makeApplication(directory: directory)
        defer { try? app.journal.close() }
        var expected = AccountStore(policy: app.accounts.store.policy)
        for event in accounts { expected.apply(event) }
        #expect(app.accounts.store.state == expected.state)
        let order = try #require(app.shards[1].shard.order(published.orderID))
        #expect(order.status == .accepted)
        #expect(order.runner == Events.runner)
    }
}
