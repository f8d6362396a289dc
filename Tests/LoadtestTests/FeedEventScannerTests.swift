import BangbangProtocol
import Testing
@testable import loadtest

@Suite struct FeedEventScannerTests {
    private let types: [[UInt8]] = [Array("express".utf8), Array("bounty".utf8)]

    /// A board event as the server writes it (JSONWriter sorts keys).
    private func event(_ name: String, type: String, seq: Int64, data: JSONValue) -> [UInt8] {
        JSONWriter.encode(["event": .string(name), "type": .string(type), "seq": .integer(seq), "data": data])
    }

    private func order(id: Int64, type: String, text: String) -> JSONValue {
        ["id": .integer(id), "type": .string(type), "status": "open", "publisher": 7, "revision": 1,
         "details": ["pickup_station": .string(text), "parcel_size": "medium"],
         "timeline": [["status": "open", "at": 1]]]
    }

    private func scan(_ bytes: [UInt8]) -> FeedEvent? {
        bytes.withUnsafeBytes { FeedEventScanner.scan($0, types: types) }
    }

    @Test func readsAnEnterEventWithItsStamp() {
        let text = FeedEventScanner.stamp(process: 4242, nanoseconds: 123_456_789_012)
        let bytes = event("feed.enter", type: "bounty", seq: 77, data: ["order": order(id: 9001, type: "bounty", text: text)])
        #expect(scan(bytes) == FeedEvent(kind: .enter, sequence: 77, orderID: 9001, typeIndex: 1,
                                         publisherProcess: 4242, publishedAt: 123_456_789_012))
    }

    @Test func readsALeaveEventByOrderID() {
        let bytes = event("feed.leave", type: "express", seq: 3, data: ["order_id": 55, "status": "accepted"])
        #expect(scan(bytes) == FeedEvent(kind: .leave, sequence: 3, orderID: 55, typeIndex: 0))
    }

    @Test func orderWithoutStampHasNoPublishTime() {
        let bytes = event("feed.update", type: "express", seq: 4, data: ["order": order(id: 5, type: "express", text: "plain")])
        let scanned = scan(bytes)
        #expect(scanned?.kind == .update && scanned?.publishedAt == nil && scanned?.orderID == 5)
    }

    @Test func typeOutsideTheListHasNoIndex() {
        let bytes = event("feed.enter", type: "group", seq: 1, data: ["order": order(id: 5, type: "group", text: "x")])
        #expect(scan(bytes)?.typeIndex == nil)
        // A prefix of a known type is not that type.
        let prefix = event("feed.enter", type: "expr", seq: 1, data: ["order": order(id: 5, type: "expr", text: "x")])
        #expect(scan(prefix)?.typeIndex == nil)
    }

    @Test func repliesAndPersonalEventsAreLeftToTheFullParser() {
        #expect(scan(JSONWriter.encode(["id": 1, "ok": true, "data": ["order": order(id: 5, type: "express", text: "x")]])) == nil)
        #expect(scan(JSONWriter.encode(["event": "order.changed", "seq": 3, "data": ["change": "accepted"]])) == nil)
        #expect(scan(Array("{\"event\":\"feed.enter\"".utf8)) == nil)
        #expect(scan([]) == nil)
    }
}

@Suite struct PhoneBookTests {
    @Test func phonesAreValidMainlandNumbersAndDistinctPerTag() {
        let book = PhoneBook(seed: 99)
        let phones = (0..<1000).map(book.phone(for:))
        #expect(Set(phones).count == 1000)
        #expect(phones.allSatisfy { $0.hasPrefix("+86139") && $0.count == 14 && $0.dropFirst().allSatisfy(\.isNumber) })
    }

    @Test func numbersWrapWithinTheRange() {
        let book = PhoneBook(seed: 1)
        let tag = Int(PhoneBook.capacity - book.base)
        #expect(book.phone(for: tag) == "+8613900000000")
    }
}

@Suite struct OrderDraftTests {
    @Test func everyTypeCarriesTheTextInItsPublicField() {
        for type in OrderDrafts.types {
            let draft = OrderDrafts.draft(type: type, text: "lt 1 2")
            #expect(draft["type"] == .string(type))
            #expect(OrderDrafts.text(of: draft) == "lt 1 2", "\(type)")
        }
    }
}
