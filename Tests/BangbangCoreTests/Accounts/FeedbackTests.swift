import Testing
@testable import BangbangCore

@Suite struct FeedbackTests {
    func setUp() throws -> (AccountHarness, admin: UserID, user: UserID) {
        var harness = AccountHarness(policy: AccountPolicy(administratorPhones: [PhoneNumber(rawValue: "+8613000000000")]))
        let admin = try harness.logIn("13000000000").user
        let user = try harness.logIn("13800138000").user
        return (harness, admin, user)
    }

    @Test func textAndContactLimits() throws {
        let fixture = try setUp()
        let harness = fixture.0
        func attempt(_ text: String, _ contact: String? = nil) throws -> AccountEvent {
            try harness.store.decideFeedback(user: fixture.user, text: text, contact: contact, now: harness.now)
        }
        #expect(throws: Never.self) { try attempt(String(repeating: "字", count: 1000)) }
        #expect(throws: Never.self) { try attempt("x") }
        #expect(throws: Never.self) { try attempt("first line\nsecond line", String(repeating: "c", count: 100)) }
        expectAccountError(.invalidField, field: "text") { try attempt(String(repeating: "字", count: 1001)) }
        expectAccountError(.invalidField, field: "text") { try attempt("") }
        expectAccountError(.invalidField, field: "text") { try attempt(" \n ") }
        expectAccountError(.invalidField, field: "contact") { try attempt("ok", String(repeating: "c", count: 101)) }
        guard case .feedbackSubmitted(let entry) = try attempt(" slow app ", "  ") else {
            Issue.record("expected feedback")
            return
        }
        #expect(entry.text == "slow app" && entry.contact == nil && entry.user == fixture.user && entry.id == 1)
    }

    @Test func administratorsPageNewestFirst() throws {
        let fixture = try setUp()
        var harness = fixture.0
        for index in 1...25 {
            try harness.decide { try $0.decideFeedback(user: fixture.user, text: "note \(index)", contact: nil, now: $1) }
            harness.advance(seconds: 1)
        }
        let first = try harness.store.feedbackPage(viewer: fixture.admin, before: nil, limit: 10)
        #expect(first.entries.map(\.id) == Array((16...25).reversed()))
        #expect(first.entries.first?.text == "note 25")
        #expect(first.nextBefore == 16)
        let second = try harness.store.feedbackPage(viewer: fixture.admin, before: first.nextBefore, limit: 10)
        #expect(second.entries.map(\.id) == Array((6...15).reversed()))
        let third = try harness.store.feedbackPage(viewer: fixture.admin, before: second.nextBefore, limit: 10)
        #expect(third.entries.map(\.id) == [5, 4, 3, 2, 1])
        #expect(third.nextBefore == nil)
        let exact = try harness.store.feedbackPage(viewer: fixture.admin, before: 11, limit: 10)
        #expect(exact.entries.map(\.id) == Array((1...10).reversed()) && exact.nextBefore == nil)
        #expect(try harness.store.feedbackPage(viewer: fixture.admin, before: 1, limit: 10).entries.isEmpty)
        #expect(try harness.store.feedbackPage(viewer: fixture.admin, before: 0, limit: 10).entries.isEmpty)
        #expect(try harness.store.feedbackPage(viewer: fixture.admin, before: 1000, limit: 3).entries.map(\.id) == [25, 24, 23])
    }

    @Test func pageSizeIsClamped() throws {
        let fixture = try setUp()
        var harness = fixture.0
        harness.store.policy.maximumPageSize = 4
        for index in 1...6 {
            try harness.decide { try $0.decideFeedback(user: fixture.user, text: "\(index)", contact: nil, now: $1) }
        }
        #expect(try harness.store.feedbackPage(viewer: fixture.admin, before: nil, limit: 100).entries.count == 4)
        #expect(try harness.store.feedbackPage(viewer: fixture.admin, before: nil, limit: 0).entries.map(\.id) == [6])
        #expect(try harness.store.feedbackPage(viewer: fixture.admin, before: nil, limit: -5).entries.count == 1)
    }

    @Test func onlyAdministratorsRead() throws {
        let fixture = try setUp()
        expectAccountError(.forbidden) { try fixture.0.store.feedbackPage(viewer: fixture.user, before: nil, limit: 10) }
    }

    @Test func emptyStoreGivesAnEmptyPage() throws {
        let fixture = try setUp()
        let page = try fixture.0.store.feedbackPage(viewer: fixture.admin, before: nil, limit: 10)
        #expect(page.entries.isEmpty && page.nextBefore == nil)
    }
}
