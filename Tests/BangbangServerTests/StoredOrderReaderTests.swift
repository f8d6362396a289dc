// The direct order reader (StoredOrderReader.swift) against the Codable decoder it replaces on
// the archive's read path: the same order from the same bytes for every type and every optional
// field, from either writer, with members reordered, unknown or null; and the same verdict on
// every truncated or damaged record.
import Testing
import TestSupport
@testable import BangbangCore
@testable import BangbangStorage

private enum Orders {
    static let now = Timestamp(milliseconds: 1_767_225_600_000)

    static let details: [OrderDetails] = [
        .express(ExpressDetails(pickupStation: "菜鸟驿站 3", pickupCode: "8-2-1043", parcelSize: .medium,
                                dropOffPlace: "Dorm 7", dropOffRoom: "512", contactPhone: "+8613812345678")),
        .express(ExpressDetails(pickupStation: "Gate", pickupCode: nil, parcelSize: .large, dropOffPlace: "Lab",
                                dropOffRoom: nil, contactPhone: nil)),
        .purchase(PurchaseDetails(items: [PurchaseItem(name: "Oat milk", quantity: 2, note: "cold"), PurchaseItem(name: "Bread", quantity: 1)],
                                  store: "FamilyMart", goodsBudget: 2_000, dropOffPlace: "Library", dropOffRoom: "B2-14")),
        .purchase(PurchaseDetails(items: [], store: nil, goodsBudget: 0, dropOffPlace: "Gym", dropOffRoom: nil)),
        .bounty(BountyDetails(title: "Lost umbrella", description: "Black \"Totes\",\nnear the gym\u{1}", place: "Gym")),
        .bounty(BountyDetails(title: "Help", description: "", place: nil)),
        .group(GroupDetails(kind: .carpool, subject: "Campus to airport", closesAt: now.adding(milliseconds: 60_000),
                            capacity: 3, minimumFill: 2, pricePerShare: 3_000)),
        .group(GroupDetails(kind: .groupBuy, subject: "Rice", closesAt: now, capacity: 50, minimumFill: nil, pricePerShare: 0)),
    ]

    /// Every kind of details, each with the optional order fields all absent and all present.
    static let all: [Order] = details.enumerated().flatMap { index, details in
        [0, 1].map { full in
            let later = now.adding(milliseconds: 90_000)
            return Order(
                id: OrderID(shard: index, serial: UInt64(1_000 + full)), publisher: UserID(1), campus: "north",
                createdAt: now, deadline: now.adding(milliseconds: 3_600_000), tip: Cents(-5 + 305 * full),
                status: full == 1 ? .cancelled : .completed, runner: full == 1 ? UserID(.max) : nil,
                acceptedAt: full == 1 ? now.adding(milliseconds: 1) : nil, autoConfirmAt: full == 1 ? later : nil,
                deliveryCode: full == 1 ? "0042" : nil, details: details,
                participants: full == 1 ? [UserID(5), UserID(3), UserID(900_000_000_000)] : [],
                timeline: [TimelineEntry(status: .open, at: now, actor: UserID(1)),
                           TimelineEntry(status: full == 1 ? .cancelled : .completed, at: later, actor: nil,
                                         note: full == 1 ? "changed my mind, \"sorry\"" : nil)],
                cancellation: full == 1 ? Cancellation(cause: .quorumNotReached, reason: "不要了", fee: 150, runner: UserID(2)) : nil,
                ratingByPublisher: full == 1 ? Rating(stars: 5, comment: "快", at: later) : nil,
                ratingByRunner: full == 1 ? Rating(stars: 1, comment: "", at: Timestamp(milliseconds: -1)) : nil,
                revision: 7 * full, searchText: details.searchText)
        }
    }

    static func codable(_ bytes: [UInt8]) -> Order? {
        try? KeyedBinaryDecoder.decode(Order.self, from: bytes.dropFirst())
    }
}

@Suite struct StoredOrderReaderTests {
    @Test(arguments: Orders.all)
    func readsWhatEitherWriterWrote(order: Order) throws {
        let direct = StoredOrder.encoded(order)
        let synthesized = try KeyedBinaryEncoder.encode(order, after: StoredOrder.keyedBinaryFormatTag, usesDirectWriters: false)
        #expect(try StoredOrder.decode(direct) == order)
        #expect(try StoredOrder.decode(synthesized) == order)
        #expect(Orders.codable(direct) == order)
    }

    /// Members in another order, an unknown member, optionals written as null: as Codable reads them.
    @Test func readsMembersInAnyOrderSkipsUnknownOnesAndTakesNullAsAbsent() throws {
        let order = Orders.all[1]
        var writer = KeyedBinaryWriter(header: StoredOrder.keyedBinaryFormatTag)
        writer.beginKeyed()
        writer.member("searchText", order.searchText)
        writer.member("revision", order.revision)
        writer.key("addedLater")
        writer.beginKeyed()
        writer.member("deep", "value")
        writer.key("list")
        writer.beginUnkeyed()
        writer.write(signed: -3)
        writer.endUnkeyed()
        writer.endKeyed()
        writer.key("timeline")
        writer.beginUnkeyed()
        for entry in order.timeline {
            writer.beginKeyed()
            writer.member("at", entry.at)
            writer.key("actor")
            writer.writeNull()
            writer.member("status", entry.status.rawValue)
            writer.endKeyed()
        }
        writer.endUnkeyed()
        writer.member("participants", order.participants)
        writer.key("details")
        writer.write(order.details)
        writer.key("runner")
        writer.writeNull()
        writer.member("status", order.status.rawValue)
        writer.member("tip", order.tip)
        writer.member("deadline", order.deadline)
        writer.member("createdAt", order.createdAt)
        writer.member("campus", order.campus)
        writer.member("publisher", order.publisher)
        writer.key("id")
        writer.write(signed: Int64(order.id.rawValue))
        writer.endKeyed()

        // Left out, or written as null: absent.
        var expected = order
        expected.runner = nil
        expected.acceptedAt = nil
        expected.autoConfirmAt = nil
        expected.deliveryCode = nil
        expected.cancellation = nil
        expected.ratingByPublisher = nil
        expected.ratingByRunner = nil
        expected.timeline = order.timeline.map { TimelineEntry(status: $0.status, at: $0.at, actor: nil, note: nil) }
        #expect(try StoredOrder.decode(writer.bytes) == expected)
        #expect(Orders.codable(writer.bytes) == expected)
    }

    @Test func refusesWhatCodableRefuses() throws {
        let order = Orders.all[3]
        var withoutRevision = KeyedBinaryWriter(header: StoredOrder.keyedBinaryFormatTag)
        withoutRevision.write(order)
        let bytes = withoutRevision.bytes
        // "revision" is written just before "searchText": drop its key and value.
        let revisionKey: [UInt8] = [9] + Array("revision".utf8)
        let start = try #require(bytes.firstRange(of: revisionKey)).lowerBound
        let missing = Array(bytes[..<start]) + Array(bytes[(start + revisionKey.count + 2)...])
        var twice = Array(bytes.dropLast())
        twice += [7] + Array("campus".utf8) + [KeyedBinaryTag.string, 1, UInt8(ascii: "x"), KeyedBinaryTag.endOfKeyed]
        var unknownStatus = order
        unknownStatus.status = .open
        let unknown = StoredOrder.encoded(unknownStatus).replacing(Array("open".utf8), with: Array("shut".utf8))
        for malformed in [missing, twice, unknown, bytes + [0], [], [StoredOrder.keyedBinaryFormatTag], [1] + bytes.dropFirst()] {
            #expect(throws: (any Error).self) { try StoredOrder.decode(malformed) }
            #expect(Orders.codable(malformed) == nil || malformed.first != StoredOrder.keyedBinaryFormatTag)
        }
    }

    /// Every truncation and thousands of damaged bytes: the reader never traps and agrees with
    /// Codable on whether the record is an order and which.
    @Test func agreesWithCodableOnDamagedRecords() {
        var random = SeededGenerator(seed: 14)
        for order in Orders.all {
            let bytes = StoredOrder.encoded(order)
            for length in 1..<bytes.count {
                let cut = Array(bytes[..<length])
                #expect((try? StoredOrder.decode(cut)) == nil)
            }
            for _ in 0..<1_500 {
                let damaged = random.damaged(bytes, from: 1)
                #expect((try? StoredOrder.decode(damaged)) == Orders.codable(damaged), "\(damaged)")
            }
        }
    }
}
