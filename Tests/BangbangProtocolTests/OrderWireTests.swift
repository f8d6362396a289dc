import Testing
import BangbangCore
@testable import BangbangProtocol

@Suite struct OrderWireTests {
    private static let now = Timestamp(milliseconds: 1_767_225_600_000)
    private static let hour: Int64 = 3_600_000

    private func arguments(_ text: String) throws -> Arguments {
        try Arguments(try JSONParser.parse(text))
    }

    private func draft(_ text: String) throws -> OrderDraft {
        try OrderWire.decodeDraft(try arguments(text))
    }

    /// The field a failing call names, or nil when it succeeds.
    private func failingField(_ body: () throws(DomainError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return error.field ?? "<no field>"
        }
    }

    // MARK: decodeDraft

    @Test func decodesAnExpressDraftWithEveryField() throws {
        let decoded = try draft(#"""
            {"type": "express", "campus": "North", "deadline": 1767229200000, "tip": 300, "delivery_code": true,
             "details": {"pickup_station": "Station 3", "pickup_code": "8-2-1043", "parcel_size": "large",
                         "drop_off_place": "Dorm 7", "drop_off_room": "512", "contact_phone": "+8613812345678"}}
            """#)
        #expect(decoded.type == .express)
        #expect(decoded.deadline == Timestamp(milliseconds: 1_767_229_200_000))
        #expect(decoded.tip == 300 && decoded.wantsDeliveryCode)
        #expect(decoded.details == .express(ExpressDetails(pickupStation: "Station 3", pickupCode: "8-2-1043",
                                                           parcelSize: .large, dropOffPlace: "Dorm 7",
                                                           dropOffRoom: "512", contactPhone: "+8613812345678")))
    }

    @Test func decodesPurchaseItemsWithQtyAndDefaultsTheBudgetToZero() throws {
        let decoded = try draft(#"""
            {"type": "purchase", "campus": "North", "deadline": 1, "tip": 0,
             "details": {"items": [{"name": "Milk", "qty": 2, "note": "cold"}, {"name": "Bread", "qty": 1}],
                         "drop_off_place": "Library"}}
            """#)
        guard case .purchase(let purchase) = decoded.details else { Issue.record("not a purchase"); return }
        #expect(purchase.items == [PurchaseItem(name: "Milk", quantity: 2, note: "cold"), PurchaseItem(name: "Bread", quantity: 1)])
        #expect(purchase.goodsBudget == 0 && purchase.store == nil && !decoded.wantsDeliveryCode)
    }

    @Test func groupDraftsNeedNoTipButOtherTypesDo() throws {
        let group = try draft(#"""
            {"type": "group", "campus": "North", "deadline": 2,
             "details": {"kind": "group_buy", "subject": "Tea", "closes_at": 1, "capacity": 4, "price_per_share": 900}}
            """#)
        #expect(group.tip == 0)
        #expect(group.details == .group(GroupDetails(kind: .groupBuy, subject: "Tea", closesAt: Timestamp(milliseconds: 1),
                                                     capacity: 4, minimumFill: nil, pricePerShare: 900)))
        let bounty = try arguments(#"""
            {"type": "bounty", "campus": "North", "deadline": 2, "details": {"title": "t", "description": "d"}}
            """#)
        let field = failingField { () throws(DomainError) in _ = try OrderWire.decodeDraft(bounty) }
        #expect(field == "tip")
    }

    @Test(arguments: [
        (#"{"campus": "N", "deadline": 1, "tip": 1, "details": {}}"#, "type"),
        (#"{"type": "taxi", "campus": "N", "deadline": 1, "tip": 1, "details": {}}"#, "type"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": 1}"#, "details"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": 1, "details": []}"#, "details"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": "1", "details": {"title": "t", "description": "d"}}"#, "tip"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1.5, "tip": 1, "details": {"title": "t", "description": "d"}}"#, "deadline"),
        (#"{"type": "bounty", "campus": 3, "deadline": 1, "tip": 1, "details": {"title": "t", "description": "d"}}"#, "campus"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": 1, "tips": 2, "details": {}}"#, "tips"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": 1, "details": {"title": "t"}}"#, "details.description"),
        (#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": 1, "details": {"title": "t", "description": "d", "x": 1}}"#, "details.x"),
        (#"{"type": "express", "campus": "N", "deadline": 1, "tip": 1, "details": {"pickup_station": "s", "drop_off_place": "p", "parcel_size": "huge"}}"#, "details.parcel_size"),
        (#"{"type": "purchase", "campus": "N", "deadline": 1, "tip": 1, "details": {"items": [{"name": "a", "qty": "2"}], "drop_off_place": "p"}}"#, "details.items[0].qty"),
        (#"{"type": "purchase", "campus": "N", "deadline": 1, "tip": 1, "details": {"items": [{"name": "a", "qty": 2, "price": 1}], "drop_off_place": "p"}}"#, "details.items[0].price"),
        (#"{"type": "group", "campus": "N", "deadline": 1, "details": {"kind": "carpool", "subject": "s", "closes_at": 1, "capacity": 2}}"#, "details.price_per_share"),
        (#"{"type": "group", "campus": "N", "deadline": 1, "delivery_code": 1, "details": {"kind": "carpool", "subject": "s", "closes_at": 1, "capacity": 2, "price_per_share": 1}}"#, "delivery_code"),
    ])
    func namesTheFieldOfAMalformedDraft(text: String, field: String) throws {
        let parsed = try arguments(text)
        #expect(failingField { () throws(DomainError) in _ = try OrderWire.decodeDraft(parsed) } == field)
    }

    // MARK: decodeDraft with checks: values too, in the order of the publish table

    private func checkedField(_ text: String, campuses: [String] = []) throws -> String? {
        var rules = OrderRules()
        rules.campuses = campuses
        let parsed = try arguments(text)
        return failingField { () throws(DomainError) in
            _ = try OrderWire.decodeDraft(parsed, checks: .init(now: Self.now, rules: rules))
        }
    }

    private var soon: Int64 { Self.now.milliseconds + Self.hour }

    @Test func checkedDraftsNameTheFirstBadFieldOfTheTable() throws {
        // A value out of its limits early in the table beats a wrong type later on.
        #expect(try checkedField(#"{"type": "bounty", "campus": " ", "deadline": "x", "tip": 1, "details": {}}"#) == "campus")
        #expect(try checkedField(#"{"type": "bounty", "campus": "N", "deadline": 1, "tip": "x", "details": {}}"#) == "deadline")
        #expect(try checkedField(#"{"type": "bounty", "campus": "N", "deadline": \#(soon), "tip": -1, "delivery_code": 3, "details": {}}"#) == "tip")
        #expect(try checkedField(#"{"type": "group", "campus": "N", "deadline": \#(soon), "delivery_code": true, "details": {}}"#) == "delivery_code")
        #expect(try checkedField(#"{"type": "group", "campus": "N", "deadline": \#(soon), "tip": 5, "details": {}}"#) == "tip")
        #expect(try checkedField(#"{"type": "bounty", "campus": "East", "deadline": 1, "tip": 1, "details": {}}"#,
                                 campuses: ["North"]) == "campus")
        // Within details: every member's shape first, then their limits, each in table order.
        #expect(try checkedField(#"{"type": "bounty", "campus": "N", "deadline": \#(soon), "tip": 1, "details": {"title": " ", "description": 5}}"#)
                == "details.description")
        #expect(try checkedField(#"{"type": "bounty", "campus": "N", "deadline": \#(soon), "tip": 1, "details": {"title": " ", "description": ""}}"#)
                == "details.title")
        #expect(try checkedField(#"""
            {"type": "group", "campus": "N", "deadline": \#(soon),
             "details": {"kind": "carpool", "subject": "s", "closes_at": \#(soon + 1), "capacity": 1, "price_per_share": 1}}
            """#) == "details.closes_at")
    }

    @Test func checkedDraftsComeBackAsStored() throws {
        let parsed = try arguments(#"""
            {"type": "express", "campus": "North", "deadline": \#(soon), "tip": 300,
             "details": {"pickup_station": "S", "drop_off_place": "D", "contact_phone": "138 1234 5678"}}
            """#)
        let draft = try OrderWire.decodeDraft(parsed, checks: .init(now: Self.now, rules: OrderRules()))
        guard case .express(let details) = draft.details else { Issue.record("not an express"); return }
        #expect(details.contactPhone == "+8613812345678")
    }

    // MARK: publishError

    @Test(arguments: [
        ("pickup_station", "details.pickup_station"),
        ("items[2].qty", "details.items[2].qty"),
        ("items", "details.items"),
        ("closes_at", "details.closes_at"),
        ("tip", "tip"),
        ("deadline", "deadline"),
        ("campus", "campus"),
        ("details", "details"),
        ("details.title", "details.title"),
    ])
    func publishErrorsNameTheWirePath(domainField: String, wireField: String) {
        let mapped = OrderWire.publishError(DomainError(.invalidField, "bad", field: domainField))
        #expect(mapped.field == wireField)
        #expect(mapped.code == .invalidField && mapped.message == "bad")
    }

    @Test func publishErrorsWithoutAFieldPassThrough() {
        let error = DomainError(.storageUnavailable, "disk full")
        #expect(OrderWire.publishError(error) == error)
    }

    @Test func everyDomainValidationErrorOfADecodedDraftNamesAFieldTheRequestHas() throws {
        // A draft the wire layer accepts but the domain refuses: the mapped field must exist in the request.
        let text = #"""
            {"type": "purchase", "campus": "N", "deadline": \#(Self.now.milliseconds + Self.hour), "tip": 1,
             "details": {"items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 100}], "drop_off_place": "p"}}
            """#
        let decoded = try draft(text)
        let field = failingField { () throws(DomainError) in
            do throws(DomainError) {
                try decoded.validate(now: Self.now, rules: OrderRules())
            } catch {
                throw OrderWire.publishError(error)
            }
        }
        #expect(field == "details.items[1].qty")
    }

    // MARK: Order views

    private func order(viewer: UserID?) throws -> JSONValue {
        var shard = BoardShard(index: 0)
        var random = SystemRandomNumberGenerator()
        let draft = try draft(#"""
            {"type": "express", "campus": "North", "deadline": \#(Self.now.milliseconds + Self.hour), "tip": 300,
             "delivery_code": true,
             "details": {"pickup_station": "S", "pickup_code": "123", "drop_off_place": "D", "drop_off_room": "5",
                         "contact_phone": "+8613812345678"}}
            """#)
        let event = try shard.decidePublish(draft, by: UserID(1), now: Self.now, rules: OrderRules(), using: &random)
        return OrderWire.encode(OrderView(shard.apply(event).after, viewer: viewer))
    }

    @Test func thePublisherSeesPrivateFieldsAndTheDeliveryCode() throws {
        guard case .object(let view) = try order(viewer: UserID(1)), case .object(let details)? = view["details"] else {
            Issue.record("not an object"); return
        }
        #expect(details["pickup_code"] == "123" && details["drop_off_room"] == "5")
        #expect(details["contact_phone"] == "+8613812345678")
        guard case .string(let code)? = view["delivery_code"] else { Issue.record("no delivery code"); return }
        #expect(code.count == 4 && code.allSatisfy(\.isNumber))
        #expect(view["id"] == .integer(256) && view["revision"] == 1 && view["runner"] == nil)
    }

    @Test func otherViewersSeeNoPrivateFieldAndNoNulls() throws {
        for viewer in [nil, UserID(2)] {
            guard case .object(let view) = try order(viewer: viewer), case .object(let details)? = view["details"] else {
                Issue.record("not an object"); return
            }
            #expect(Set(details.keys) == ["pickup_station", "parcel_size", "drop_off_place"])
            #expect(view["delivery_code"] == nil && view["participant_count"] == nil)
            #expect(!view.values.contains(.null))
        }
    }

    // MARK: BoardWire

    @Test func aListQueryDefaultsToEveryTypeNewestFirstTwenty() throws {
        let query = try BoardWire.decodeListQuery(try arguments("{}"))
        #expect(query.filter.types == Set(OrderType.allCases))
        #expect(query.sort == .newest && query.limit == 20 && query.offset == 0 && query.after == nil)
    }

    @Test func aListQueryReadsEveryMember() throws {
        let query = try BoardWire.decodeListQuery(try arguments(#"""
            {"types": ["bounty", "express", "bounty"], "campus": "East", "min_tip": 50, "keyword": "Desk",
             "sort": "deadline", "limit": 5, "cursor": "1767225600000:513"}
            """#))
        #expect(query.filter == FeedFilter(types: [.bounty, .express], campus: "East", minimumTip: 50, keyword: "desk"))
        #expect(query.sort == .deadline && query.limit == 5)
        #expect(query.after == ListCursor(key: 1_767_225_600_000, id: OrderID(rawValue: 513)))
    }

    @Test(arguments: [
        (#"{"types": []}"#, "types"),
        (#"{"types": ["taxi"]}"#, "types[0]"),
        (#"{"types": ["express", 4]}"#, "types[1]"),
        (#"{"types": "express"}"#, "types"),
        (#"{"min_tip": -1}"#, "min_tip"),
        (#"{"limit": 0}"#, "limit"),
        (#"{"limit": 101}"#, "limit"),
        (#"{"offset": 10001}"#, "offset"),
        (#"{"cursor": "12"}"#, "cursor"),
        (#"{"cursor": "a:b"}"#, "cursor"),
        (#"{"cursor": "1:2", "offset": 1}"#, "offset"),
        (#"{"sort": "oldest"}"#, "sort"),
        (#"{"page": 1}"#, "page"),
    ])
    func refusesABadListQueryNamingTheField(text: String, field: String) throws {
        let parsed = try arguments(text)
        #expect(failingField { () throws(DomainError) in _ = try BoardWire.decodeListQuery(parsed) } == field)
    }

    @Test func aFeedFilterMustNameItsTypes() throws {
        let parsed = try arguments(#"{"campus": "East"}"#)
        #expect(failingField { () throws(DomainError) in _ = try BoardWire.decodeFilter(parsed, typesRequired: true) } == "types")
        #expect(try BoardWire.decodeFilter(parsed, typesRequired: false).types == Set(OrderType.allCases))
    }

    @Test func aPageCarriesItsCursorOnlyWhenMoreFollow() throws {
        var shard = BoardShard(index: 1)
        var random = SystemRandomNumberGenerator()
        for tip in [300, 500] {
            let bounty = try draft(#"""
                {"type": "bounty", "campus": "N", "deadline": \#(Self.now.milliseconds + Self.hour), "tip": \#(tip),
                 "details": {"title": "t", "description": "d"}}
                """#)
            shard.apply(try shard.decidePublish(bounty, by: UserID(1), now: Self.now, rules: OrderRules(), using: &random))
        }
        let first = OrderListQuery(filter: FeedFilter(types: [.bounty]), sort: .tip, limit: 1)
        guard case .object(let page) = BoardWire.encode(OrderListPage.merge([shard.listOpen(first)], query: first)),
              case .array(let orders)? = page["orders"], case .object(let top)? = orders.first else {
            Issue.record("not a page"); return
        }
        #expect(orders.count == 1 && top["tip"] == 500 && page["total"] == 2)
        #expect(page["next_cursor"] == .string("500:\(2 << 8 | 1)"))
        let rest = OrderListQuery(filter: first.filter, sort: .tip, limit: 5)
        guard case .object(let whole) = BoardWire.encode(OrderListPage.merge([shard.listOpen(rest)], query: rest)) else {
            Issue.record("not a page"); return
        }
        #expect(whole["next_cursor"] == nil && whole["total"] == 2)
    }

    @Test func earningsTotalTipsAndFees() {
        var earnings = RunnerEarnings()
        earnings.completedCount = 2
        earnings.tips = 700
        earnings.cancellationFees = 200
        earnings.activeCount = 1
        earnings.ratingCount = 2
        earnings.ratingStars = 9
        #expect(BoardWire.encode(earnings) == [
            "completed_count": 2, "tips": 700, "cancellation_fees": 200, "total": 900,
            "active_count": 1, "rating_count": 2, "rating_stars": 9,
        ])
    }
}
