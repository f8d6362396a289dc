// The wire model at its edges: field paths, error objects, drafts per type, events a newer
// server may send.
import BangbangProtocol
import Testing
@testable import BangbangClient

@Suite struct WireTests {
    @Test func fieldPathsReadTheServersDottedForm() {
        #expect(FieldPath(parsing: "details.items[2].qty") == [.key("details"), .key("items"), .index(2), .key("qty")])
        #expect(FieldPath(parsing: "tip") == ["tip"])
        #expect(FieldPath(parsing: "types[0]") == ["types", 0])
        #expect(FieldPath(parsing: "details.items[2].qty").description == "details.items[2].qty")
        // Not the dotted form: kept as text, never refused, never a crash.
        #expect(FieldPath(parsing: "a[x]") == ["a[x]"])
        #expect(FieldPath(parsing: "a[") == ["a["])
        #expect(FieldPath(parsing: "") == [])
        #expect(FieldPath(parsing: "..a..b") == ["a", "b"])
    }

    @Test func errorsCarryTheirCodeFieldPathAndRetryTime() throws {
        let limited = try ServerError(wire: ["code": "rate_limited", "message": "slow down", "retry_after_ms": 1_500], at: [])
        #expect(limited.code == .rateLimited && limited.retryAfter == .milliseconds(1_500))
        let invalid = try ServerError(wire: ["code": "invalid_field", "message": "too many",
                                             "field": "details.items[2].qty"], at: [])
        #expect(invalid.field == [.key("details"), .key("items"), .index(2), .key("qty")] && invalid.retryAfter == nil)
        let future = try ServerError(wire: ["code": "moon_phase_wrong", "message": "?"], at: [])
        #expect(future.code == .other("moon_phase_wrong") && future.code.rawValue == "moon_phase_wrong")
        for code in ErrorCode.documented { #expect(ErrorCode(rawValue: code.rawValue) == code) }
    }

    @Test func draftsSendOnlyWhatTheirTypeAccepts() {
        let deadline = Timestamp(milliseconds: 2_000_000)
        let group = OrderDraft.group(GroupDetails(kind: .carpool, subject: "to the station", closesAt: Timestamp(milliseconds: 1_000_000),
                                                  capacity: 3, pricePerShare: 1_000), campus: "North", deadline: deadline)
        let data = PublishOrder(group).data
        #expect(data?["tip"] == nil && data?["delivery_code"] == nil, "a group order has no runner: \(String(describing: data))")
        #expect(data?["details"]?["minimum_fill"] == nil && data?["details"]?["kind"] == "carpool")

        let express = OrderDraft.express(ExpressDetails(pickupStation: "S3", dropOffPlace: "Dorm 7"), campus: "North",
                                         deadline: deadline, tip: 300, requestsDeliveryCode: true)
        let expressData = PublishOrder(express).data
        #expect(expressData?["tip"] == 300 && expressData?["delivery_code"] == true)
        #expect(expressData?["details"]?["parcel_size"] == "small", "the documented default is sent explicitly")
        #expect(expressData?["details"]?["pickup_code"] == nil)
    }

    @Test func documentedDefaultsFillAbsentMembers() throws {
        var order = Wire.order(1, revision: 1)
        if case .object(var members) = order {
            members["type"] = "purchase"
            members["details"] = ["items": [["name": "water", "qty": 2]], "drop_off_place": "Dorm 7"]
            order = .object(members)
        }
        let decoded = try Order(wire: order, at: [])
        guard case .purchase(let purchase) = decoded.details else { Issue.record("not a purchase"); return }
        #expect(purchase.goodsBudget == 0 && purchase.store == nil && purchase.items.first?.quantity == 2)
    }

    @Test func anEventThisVersionCannotReadKeepsItsPlaceInTheStream() throws {
        let message = try ServerMessage(wire: ["event": "account.moved_to_mars", "seq": 12, "data": ["x": 1]])
        guard case .personal(let event) = message else { Issue.record("\(message)"); return }
        #expect(event.seq == 12)
        guard case .unrecognized(let name, _) = event.kind else { Issue.record("\(event)"); return }
        #expect(name == "account.moved_to_mars")

        let broken = try ServerMessage(wire: ["event": "order.changed", "seq": 13, "data": ["change": "accepted"]])
        guard case .personal(let brokenEvent) = broken, case .unrecognized(_, let reason) = brokenEvent.kind else {
            Issue.record("\(broken)")
            return
        }
        #expect(brokenEvent.seq == 13 && reason.contains("data.order"), "\(reason)")
    }

    @Test func nullDataReadsAsNoData() throws {
        let message = try ServerMessage(wire: ["id": 3, "ok": true, "data": nil])
        guard case .reply(let id, .success) = message else { Issue.record("\(message)"); return }
        #expect(id == 3)
        let event = try ServerMessage(wire: ["event": "account.profile_updated", "seq": 1, "data": nil])
        guard case .personal(let personal) = event else { Issue.record("\(event)"); return }
        #expect(personal.kind == .profileUpdated)
    }

    @Test func serverURLsParseAndRefuseWhatIsNotOne() throws {
        let url = try ServerURL(parsing: "wss://[::1]:8443/ws")
        #expect(url.isSecure && url.host == "::1" && url.port == 8443 && url.path == "/ws" && url.isLoopback)
        #expect(url.hostHeader == "[::1]:8443")
        #expect(try ServerURL(parsing: "ws://example.edu").port == 80)
        #expect(try ServerURL(parsing: "wss://example.edu").description == "wss://example.edu/")
        for bad in ["http://x/ws", "ws://", "ws://:80/", "ws://host:0/", "ws://host:99999/", "ws://u@host/", "ws://[::1/"] {
            #expect(throws: ServerURL.ParseError.self, "\(bad)") { try ServerURL(parsing: bad) }
        }
    }
}
