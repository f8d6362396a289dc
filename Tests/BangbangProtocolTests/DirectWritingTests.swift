// The direct writers (orders, envelopes) against the general path through `JSONValue`: the same
// bytes for every shape an order can take, so clients see exactly what they saw before.
import Testing
@testable import BangbangCore
@testable import BangbangProtocol

@Suite struct DirectWritingTests {
    private static let now = Timestamp(milliseconds: 1_767_225_600_000)

    private static func baseView(_ details: OrderDetails, tip: Cents = 300) throws -> OrderView {
        var shard = BoardShard(index: 0)
        var random = SystemRandomNumberGenerator()
        var deadline = now.milliseconds + 3_600_000
        var isGroup = false
        if case .group(let group) = details {
            deadline = group.closesAt.milliseconds + 3_600_000
            isGroup = true
        }
        // A group order has neither a tip nor a delivery code.
        let draft = OrderDraft(campus: "North \"Gate\"", deadline: Timestamp(milliseconds: deadline), tip: isGroup ? 0 : tip,
                               wantsDeliveryCode: !isGroup, details: details)
        let event = try shard.decidePublish(draft, by: UserID(1), now: now, rules: OrderRules(), using: &random)
        return OrderView(shard.apply(event).after, viewer: UserID(1))
    }

    private static var detailVariants: [OrderDetails] {
        [
            .express(ExpressDetails(pickupStation: "Station 3", pickupCode: "12-34", parcelSize: .large,
                                    dropOffPlace: "Dorm 5\n(back door)", dropOffRoom: "501", contactPhone: "+8613812345678")),
            .express(ExpressDetails(pickupStation: "S", pickupCode: nil, parcelSize: .small,
                                    dropOffPlace: "D", dropOffRoom: nil, contactPhone: nil)),
            .purchase(PurchaseDetails(items: [PurchaseItem(name: "Milk", quantity: 2, note: "cold \\ fresh"),
                                              PurchaseItem(name: "面包", quantity: 1)],
                                      store: "Campus mart", goodsBudget: 2_500, dropOffPlace: "Library", dropOffRoom: "2F")),
            .purchase(PurchaseDetails(items: [PurchaseItem(name: "Pen", quantity: 1)], store: nil, goodsBudget: 0,
                                      dropOffPlace: "Gym", dropOffRoom: nil)),
            .bounty(BountyDetails(title: "Find my cat", description: "Grey, answers to \"Mao\"\t🐈", place: "Lake")),
            .bounty(BountyDetails(title: "Queue for tickets", description: "Any", place: nil)),
            .group(GroupDetails(kind: .carpool, subject: "Airport", closesAt: Timestamp(milliseconds: now.milliseconds + 7_200_000),
                                capacity: 4, minimumFill: 2, pricePerShare: 5_000)),
            .group(GroupDetails(kind: .groupBuy, subject: "Fruit", closesAt: Timestamp(milliseconds: now.milliseconds + 7_200_000),
                                capacity: 10, minimumFill: nil, pricePerShare: 800)),
        ]
    }

    /// Each base view, then again with every optional member set.
    private static func views() throws -> [OrderView] {
        var views: [OrderView] = []
        for details in detailVariants {
            let base = try baseView(details)
            views.append(base)
            var redacted = base
            redacted.details = base.details.redacted
            redacted.deliveryCode = nil
            views.append(redacted)
            var full = base
            full.runner = UserID(77)
            full.autoConfirmAt = Timestamp(milliseconds: 1_767_300_000_000)
            full.cancellation = Cancellation(cause: .publisher, reason: "changed my mind, \"sorry\"", fee: 150, runner: UserID(77))
            full.ratingByPublisher = Rating(stars: 5, comment: "fast", at: Timestamp(milliseconds: 1_767_300_000_001))
            full.ratingByRunner = Rating(stars: 4, comment: "", at: Timestamp(milliseconds: 1_767_300_000_002))
            full.timeline.append(TimelineEntry(status: .accepted, at: Timestamp(milliseconds: 1_767_300_000_003), actor: UserID(77)))
            full.timeline.append(TimelineEntry(status: .cancelled, at: Timestamp(milliseconds: 1_767_300_000_004), actor: nil,
                                               note: "quorum not reached"))
            full.participants = [UserID(3), UserID(4)]
            full.participantCount = 2
            full.revision = 12
            full.tip = -1
            views.append(full)
        }
        return views
    }

    @Test func anOrderIsWrittenExactlyAsItsValueIs() throws {
        let views = try Self.views()
        #expect(views.count == 24)
        for view in views {
            let expected = JSONWriter.encode(["order": OrderWire.encode(view)])
            let written = OrderWire.orderData(view)
            #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
    }

    /// A reply and an `order.changed` event written around an encoded view are the messages
    /// built from the view's data, byte for byte, for every view and for ids and sequences of
    /// every width.
    @Test func messagesAroundAnEncodedViewAreWrittenAsTheDataIs() throws {
        for view in try Self.views() {
            let encodedView = OrderWire.encoded(view)
            for id: JSONValue in [.integer(7), .integer(-9_223_372_036_854_775_808), .string("req-\"1\"")] {
                let expected = Reply.success(id: id, encodedData: OrderWire.orderData(encodedView: encodedView))
                #expect(Reply.success(id: id, encodedOrderView: encodedView) == expected)
                #expect(expected == JSONWriter.encode(["id": id, "ok": true, "data": ["order": OrderWire.encode(view)]]))
            }
            for sequence: UInt64 in [1, 10, 1_234_567_890] {
                for change in ["accepted", "tip_raised", "a \"quoted\" change"] {
                    let data = JSONWriter.encode(["change": .string(change), "order": OrderWire.encode(view)])
                    #expect(OrderWire.changedData(change: change, encodedView: encodedView) == data)
                    #expect(OrderWire.changedData(change: change, view: view) == data)
                    let expected = EventMessage.personal(name: "order.changed", sequence: sequence, encodedData: data)
                    #expect(try JSONParser.parse(expected) == ["event": "order.changed", "seq": .integer(Int64(sequence)),
                                                               "data": ["change": .string(change), "order": OrderWire.encode(view)]])
                }
            }
        }
    }

    @Test func envelopesAreWrittenExactlyAsTheirValuesAre() throws {
        let data: JSONValue = ["order": ["id": 5, "note": "a \"b\""], "list": [1, -2, 3]]
        let encoded = JSONWriter.encode(data)
        for id: JSONValue in [.integer(7), .integer(-9_223_372_036_854_775_808), .string("req-\"1\"")] {
            let success = JSONWriter.encode(["id": id, "ok": true, "data": data])
            #expect(Reply.success(id: id, data: data) == success)
            #expect(Reply.success(id: id, encodedData: encoded) == success)
            for field: String? in [nil, "details.items[0].qty"] {
                var body: [String: JSONValue] = ["code": "order_taken", "message": "someone was \"faster\""]
                if let field { body["field"] = .string(field) }
                let failure = JSONWriter.encode(["id": id, "ok": false, "error": .object(body)])
                #expect(Reply.failure(id: id, error: DomainError(ErrorCode("order_taken"), "someone was \"faster\"", field: field)) == failure)
            }
        }
        for sequence: UInt64 in [0, 9, 10, 1_234_567_890] {
            let personal = JSONWriter.encode(["event": "order.changed", "seq": .integer(Int64(sequence)), "data": data])
            #expect(EventMessage.personal(name: "order.changed", sequence: sequence, data: data) == personal)
            #expect(EventMessage.personal(name: "order.changed", sequence: sequence, encodedData: encoded) == personal)
            let board = JSONWriter.encode(["event": "feed.enter", "type": "express", "seq": .integer(Int64(sequence)), "data": data])
            #expect(EventMessage.board(name: "feed.enter", type: "express", sequence: sequence, data: data) == board)
            #expect(EventMessage.board(name: "feed.enter", type: "express", sequence: sequence, encodedData: encoded) == board)
        }
    }

    @Test(arguments: [Int64.min, -1_000_000_007, -10, -1, 0, 1, 9, 10, 99, 100, 1_767_225_600_000, Int64.max])
    func integersAreWrittenInDecimal(value: Int64) {
        var writer = JSONWriter()
        writer.write(integer: value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
    }
}
