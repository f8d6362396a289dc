import Testing
@testable import BangbangCore

@Suite struct OrderValidationTests {
    let now = Fixture.now
    let rules = Fixture.rules

    func field(_ draft: OrderDraft) -> String? {
        let error = domainError { () throws(DomainError) in try draft.validate(now: now, rules: rules) }
        if let error { #expect(error.code == .invalidField) }
        return error?.field ?? (error == nil ? nil : "<no field>")
    }

    func text(_ count: Int) -> String { String(repeating: "字", count: count) }

    @Test func validDraftsOfEveryTypePass() {
        for draft in [Fixture.express(), Fixture.purchase(), Fixture.bounty(), Fixture.group()] {
            #expect(field(draft) == nil, "\(draft.type)")
        }
    }

    @Test func commonFieldsAreChecked() {
        var draft = Fixture.express()
        draft.campus = "  "
        #expect(field(draft) == "campus")
        draft.campus = text(60)
        #expect(field(draft) == nil)
        draft.campus = text(61)
        #expect(field(draft) == "campus")
    }

    @Test func deadlineMustBeFutureAndWithinThirtyDays() {
        let month = rules.maximumDeadlineAhead
        #expect(field(Fixture.express(deadline: now)) == "deadline")
        #expect(field(Fixture.express(deadline: now.adding(milliseconds: -1))) == "deadline")
        #expect(field(Fixture.express(deadline: now.adding(milliseconds: 1))) == nil)
        #expect(field(Fixture.express(deadline: now.adding(milliseconds: month))) == nil)
        #expect(field(Fixture.express(deadline: now.adding(milliseconds: month + 1))) == "deadline")
    }

    @Test func tipMustBeBetweenZeroAndCap() {
        #expect(field(Fixture.express(tip: -1)) == "tip")
        #expect(field(Fixture.express(tip: 0)) == nil)
        #expect(field(Fixture.express(tip: rules.maximumTip)) == nil)
        #expect(field(Fixture.express(tip: rules.maximumTip + 1)) == "tip")
    }

    func expressDraft(_ change: (inout ExpressDetails) -> Void) -> OrderDraft {
        var draft = Fixture.express()
        guard case .express(var details) = draft.details else { fatalError("fixture") }
        change(&details)
        draft.details = .express(details)
        return draft
    }

    @Test func expressRequiresStationAndPlace() {
        #expect(field(expressDraft { $0.pickupStation = "" }) == "pickup_station")
        #expect(field(expressDraft { $0.dropOffPlace = " " }) == "drop_off_place")
        #expect(field(expressDraft { $0.pickupStation = text(61) }) == "pickup_station")
        #expect(field(expressDraft { $0.pickupCode = text(61) }) == "pickup_code")
        #expect(field(expressDraft { $0.dropOffRoom = text(61) }) == "drop_off_room")
        #expect(field(expressDraft { $0.pickupCode = nil; $0.dropOffRoom = nil; $0.contactPhone = nil }) == nil)
    }

    /// The one definition of a phone number, the accounts' (`PhoneNumber`): E.164 or a bare
    /// mainland mobile number, stored as E.164.
    @Test func expressContactPhoneIsAPhoneNumberStoredAsE164() throws {
        #expect(field(expressDraft { $0.contactPhone = "13812345678" }) == nil)
        #expect(try contactPhone(stored: "13812345678") == "+8613812345678")
        #expect(try contactPhone(stored: "+86 138-1234-5678") == "+8613812345678")
        #expect(try contactPhone(stored: "+12345678") == "+12345678")
        #expect(field(expressDraft { $0.contactPhone = "12812345678" }) == "contact_phone", "not a mainland mobile")
        #expect(field(expressDraft { $0.contactPhone = "1381234567" }) == "contact_phone", "ten digits")
        #expect(field(expressDraft { $0.contactPhone = "+0123456789" }) == "contact_phone", "no leading 0 after +")
        #expect(field(expressDraft { $0.contactPhone = "+86138123x5678" }) == "contact_phone")
        #expect(field(expressDraft { $0.contactPhone = "+1234567" }) == "contact_phone")
        #expect(field(expressDraft { $0.contactPhone = "+12345678" }) == nil)
        #expect(field(expressDraft { $0.contactPhone = "+123456789012345" }) == nil)
        #expect(field(expressDraft { $0.contactPhone = "+1234567890123456" }) == "contact_phone")
    }

    func contactPhone(stored input: String) throws -> String? {
        let draft = try expressDraft { $0.contactPhone = input }.validated(now: now, rules: rules)
        guard case .express(let details) = draft.details else { return nil }
        return details.contactPhone
    }

    @Test func groupOrdersTakeNoTipAndNoDeliveryCode() {
        var draft = Fixture.group()
        draft.tip = 1
        #expect(field(draft) == "tip")
        draft.tip = 0
        #expect(field(draft) == nil)
        draft.wantsDeliveryCode = true
        #expect(field(draft) == "delivery_code")
        var express = Fixture.express()
        express.wantsDeliveryCode = true
        #expect(field(express) == nil)
    }

    @Test func campusIsOneOfTheConfiguredWhenThereAreAny() {
        var configured = rules
        configured.campuses = ["North", "South"]
        let check = { (campus: String, rules: OrderRules) -> String? in
            domainError { () throws(DomainError) in try Fixture.express(campus: campus).validate(now: now, rules: rules) }?.field
        }
        #expect(check("North", configured) == nil)
        #expect(check("north", configured) == "campus", "exact names: a typo would split the board")
        #expect(check("North ", configured) == "campus")
        #expect(check("East", configured) == "campus")
        #expect(check("East", rules) == nil, "no list: any name")
    }

    @Test func fieldsAreCheckedInTheOrderOfThePublishTable() {
        var configured = rules
        configured.campuses = ["North"]
        var draft = Fixture.express(deadline: now, tip: -1, campus: "East")
        guard case .express(var details) = draft.details else { return }
        details.pickupStation = ""
        draft.details = .express(details)
        draft.wantsDeliveryCode = true
        let first = { (draft: OrderDraft) in
            domainError { () throws(DomainError) in try draft.validate(now: now, rules: configured) }?.field
        }
        #expect(first(draft) == "campus")
        draft.campus = "North"
        #expect(first(draft) == "deadline")
        draft.deadline = now.adding(milliseconds: 1)
        #expect(first(draft) == "tip")
        draft.tip = 0
        #expect(first(draft) == "pickup_station")
    }

    @Test func purchaseItemsAreCheckedOneByOne() {
        let item = PurchaseItem(name: "Tea", quantity: 1)
        #expect(field(Fixture.purchase(items: [])) == "items")
        #expect(field(Fixture.purchase(items: Array(repeating: item, count: 20))) == nil)
        #expect(field(Fixture.purchase(items: Array(repeating: item, count: 21))) == "items")
        for (quantity, expected) in [(0, "items[2].qty"), (1, nil), (99, nil), (100, "items[2].qty"), (-5, "items[2].qty")] {
            let items = [item, item, PurchaseItem(name: "Pens", quantity: quantity)]
            #expect(field(Fixture.purchase(items: items)) == expected, "quantity \(quantity)")
        }
        #expect(field(Fixture.purchase(items: [item, PurchaseItem(name: "", quantity: 1)])) == "items[1].name")
        #expect(field(Fixture.purchase(items: [PurchaseItem(name: "Tea", quantity: 1, note: text(61))])) == "items[0].note")
    }

    @Test func purchaseBudgetAndPlaceAreChecked() {
        #expect(field(Fixture.purchase(budget: -1)) == "goods_budget")
        #expect(field(Fixture.purchase(budget: 0)) == nil)
        #expect(field(Fixture.purchase(budget: rules.maximumGoodsBudget)) == nil)
        #expect(field(Fixture.purchase(budget: rules.maximumGoodsBudget + 1)) == "goods_budget")
        var draft = Fixture.purchase()
        guard case .purchase(var details) = draft.details else { fatalError("fixture") }
        details.dropOffPlace = ""
        draft.details = .purchase(details)
        #expect(field(draft) == "drop_off_place")
        details.dropOffPlace = "Library"
        details.store = text(61)
        draft.details = .purchase(details)
        #expect(field(draft) == "store")
    }

    @Test func bountyRequiresTitleAndDescription() {
        #expect(field(Fixture.bounty(title: "")) == "title")
        #expect(field(Fixture.bounty(description: "\n")) == "description")
        #expect(field(Fixture.bounty(title: text(60))) == nil)
        #expect(field(Fixture.bounty(title: text(61))) == "title")
        #expect(field(Fixture.bounty(description: text(1000))) == nil)
        #expect(field(Fixture.bounty(description: text(1001))) == "description")
    }

    @Test func groupCapacityQuorumAndTimesAreChecked() {
        #expect(field(Fixture.group(capacity: 1)) == "capacity")
        #expect(field(Fixture.group(capacity: 2)) == nil)
        #expect(field(Fixture.group(capacity: 50)) == nil)
        #expect(field(Fixture.group(capacity: 51)) == "capacity")
        #expect(field(Fixture.group(capacity: 4, minimumFill: 0)) == "minimum_fill")
        #expect(field(Fixture.group(capacity: 4, minimumFill: 1)) == nil)
        #expect(field(Fixture.group(capacity: 4, minimumFill: 4)) == nil)
        #expect(field(Fixture.group(capacity: 4, minimumFill: 5)) == "minimum_fill")
        #expect(field(Fixture.group(closesAt: now)) == "closes_at")
        let deadline = now.adding(milliseconds: Fixture.hour)
        #expect(field(Fixture.group(closesAt: deadline, deadline: deadline)) == nil)
        #expect(field(Fixture.group(closesAt: deadline.adding(milliseconds: 1), deadline: deadline)) == "closes_at")
    }

    @Test func groupSubjectAndPriceAreChecked() {
        var draft = Fixture.group()
        guard case .group(var details) = draft.details else { fatalError("fixture") }
        details.subject = ""
        draft.details = .group(details)
        #expect(field(draft) == "subject")
        details.subject = "Airport"
        details.pricePerShare = -1
        draft.details = .group(details)
        #expect(field(draft) == "price_per_share")
        details.pricePerShare = rules.maximumTip + 1
        draft.details = .group(details)
        #expect(field(draft) == "price_per_share")
    }

    @Test func publishRefusesInvalidDraftWithoutAllocatingAnId() throws {
        var driver = ShardDriver()
        let error = domainError { () throws(DomainError) in try driver.publish(Fixture.bounty(title: "")) }
        #expect(error?.field == "title")
        #expect(driver.shard.nextSerial == 1)
        let id = try driver.publish(Fixture.bounty())
        #expect(id == OrderID(shard: 0, serial: 1))
    }
}
