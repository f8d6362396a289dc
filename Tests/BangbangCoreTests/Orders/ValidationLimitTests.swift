// Every validation failure a form can produce names the bound it broke (`minimum`, `maximum`),
// so an app words it itself: "小费最多 ¥500", "数量须在 1 到 99 之间".
import Testing
@testable import BangbangCore

@Suite struct ValidationLimitTests {
    let now = Fixture.now
    let rules = Fixture.rules

    func failure(_ draft: OrderDraft) -> DomainError? {
        domainError { () throws(DomainError) in try draft.validate(now: now, rules: rules) }
    }

    @Test func aTipAboveTheCapNamesTheCapInFen() {
        let error = failure(Fixture.express(tip: rules.maximumTip + 1))
        #expect(error?.field == "tip" && error?.maximum == rules.maximumTip && error?.minimum == nil)
        let negative = failure(Fixture.express(tip: -1))
        #expect(negative?.field == "tip" && negative?.minimum == 0 && negative?.maximum == nil)
    }

    @Test func deadlinesNameTheEarliestAndLatestTimeAllowed() {
        let past = failure(Fixture.express(deadline: now))
        #expect(past?.field == "deadline" && past?.minimum == now.milliseconds + 1 && past?.maximum == nil)
        let far = failure(Fixture.express(deadline: now.adding(milliseconds: rules.maximumDeadlineAhead + 1)))
        #expect(far?.field == "deadline" && far?.maximum == now.milliseconds + rules.maximumDeadlineAhead)
    }

    @Test func textNamesOneCharacterWhenBlankAndItsLengthWhenTooLong() {
        var blank = Fixture.bounty(title: "  ")
        #expect(failure(blank)?.minimum == 1)
        blank = Fixture.bounty(title: String(repeating: "字", count: rules.maximumShortText + 1))
        let long = failure(blank)
        #expect(long?.field == "title" && long?.maximum == Int64(rules.maximumShortText) && long?.minimum == nil)
    }

    @Test func countsNameTheirRange() {
        let quantity = failure(Fixture.purchase(items: [PurchaseItem(name: "Water", quantity: 100)]))
        #expect(quantity?.field == "items[0].qty" && quantity?.minimum == 1 && quantity?.maximum == 99)
        let capacity = failure(Fixture.group(capacity: 1))
        #expect(capacity?.field == "capacity" && capacity?.minimum == 2 && capacity?.maximum == 50)
        let fill = failure(Fixture.group(capacity: 4, minimumFill: 5))
        #expect(fill?.field == "minimum_fill" && fill?.minimum == 1 && fill?.maximum == 4)
        let budget = failure(Fixture.purchase(budget: rules.maximumGoodsBudget + 1))
        #expect(budget?.field == "goods_budget" && budget?.maximum == rules.maximumGoodsBudget)
    }

    @Test func aGroupClosingAfterItsDeadlineNamesTheDeadline() {
        let deadline = now.adding(milliseconds: 2 * Fixture.hour)
        let error = failure(Fixture.group(closesAt: deadline.adding(milliseconds: 1), deadline: deadline))
        #expect(error?.field == "closes_at" && error?.maximum == deadline.milliseconds)
    }

    @Test func aMalformedContactPhoneHasNoNumberToName() {
        var draft = Fixture.express()
        guard case .express(var details) = draft.details else { fatalError("fixture") }
        details.contactPhone = "12345"
        draft.details = .express(details)
        let error = failure(draft)
        #expect(error?.field == "contact_phone" && error?.minimum == nil && error?.maximum == nil)
    }

    @Test func aTipBumpNamesTheLeastItMayBeAndStarsTheirRange() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express(tip: 300))
        let low = domainError { () throws(DomainError) in try driver.run(.raiseTip(to: 300), on: id, by: Fixture.publisher) }
        #expect(low?.field == "tip" && low?.minimum == 301 && low?.maximum == nil)
        let high = domainError { () throws(DomainError) in
            try driver.run(.raiseTip(to: rules.maximumTip + 1), on: id, by: Fixture.publisher)
        }
        #expect(high?.field == "tip" && high?.maximum == rules.maximumTip)
    }
}
