import Testing
@testable import BangbangCore

@Suite struct VerificationTests {
    /// A store with an administrator by configuration (user 1) and an applicant (user 2).
    func setUp(campuses: [String] = []) throws -> (AccountHarness, admin: UserID, applicant: UserID) {
        var harness = AccountHarness(policy: AccountPolicy(campuses: campuses,
                                                           administratorPhones: [PhoneNumber(rawValue: "+8613000000000")]))
        let admin = try harness.logIn("13000000000").user
        let applicant = try harness.logIn("13800138000").user
        return (harness, admin, applicant)
    }

    func submit(_ harness: inout AccountHarness, _ user: UserID) throws {
        try harness.decide {
            try $0.decideVerificationSubmission(user: user, realName: "张三", studentID: "2024-001", school: "东校区",
                                                now: $1)
        }
    }

    @Test func approvalMakesARunner() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let applicant = fixture.applicant
        #expect(!harness.store.canRunErrands(applicant))
        try submit(&harness, applicant)
        #expect(harness.store.state.accounts[applicant]?.verification?.status == .pending)
        #expect(!harness.store.canRunErrands(applicant))
        let event = try harness.store.decideVerificationApproval(administrator: admin, user: applicant, now: harness.now)
        harness.commit(event)
        #expect(event.recipients == [applicant])
        #expect(harness.store.canRunErrands(applicant))
        let verification = try #require(harness.store.state.accounts[applicant]?.verification)
        #expect(verification.status == .approved && verification.decidedBy == admin && verification.decidedAt == harness.now)
    }

    @Test func rejectionCarriesTheReasonAndAllowsResubmission() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let applicant = fixture.applicant
        try submit(&harness, applicant)
        let event = try harness.store.decideVerificationRejection(administrator: admin, user: applicant,
                                                                  reason: " 照片不清楚 ", now: harness.now)
        harness.commit(event)
        #expect(event.recipients == [applicant])
        #expect(harness.store.state.accounts[applicant]?.verification?.rejectionReason == "照片不清楚")
        #expect(!harness.store.canRunErrands(applicant))
        try submit(&harness, applicant)
        #expect(harness.store.state.accounts[applicant]?.verification?.status == .pending)
        #expect(harness.store.state.accounts[applicant]?.verification?.rejectionReason == nil)
    }

    @Test func cannotResubmitWhilePendingOrApproved() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let applicant = fixture.applicant
        try submit(&harness, applicant)
        expectAccountError(.verificationInProgress) { try submit(&harness, applicant) }
        try harness.decide { try $0.decideVerificationApproval(administrator: admin, user: applicant, now: $1) }
        expectAccountError(.verificationInProgress) { try submit(&harness, applicant) }
    }

    @Test func decisionsNeedAPendingApplication() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let applicant = fixture.applicant
        // never submitted
        expectAccountError(.verificationNotPending) {
            try harness.store.decideVerificationApproval(administrator: admin, user: applicant, now: harness.now)
        }
        expectAccountError(.verificationNotPending) {
            try harness.store.decideVerificationRejection(administrator: admin, user: applicant, reason: "no", now: harness.now)
        }
        // already rejected
        try submit(&harness, applicant)
        try harness.decide {
            try $0.decideVerificationRejection(administrator: admin, user: applicant, reason: "blurry", now: $1)
        }
        expectAccountError(.verificationNotPending) {
            try harness.store.decideVerificationApproval(administrator: admin, user: applicant, now: harness.now)
        }
        expectAccountError(.verificationNotPending) {
            try harness.store.decideVerificationRejection(administrator: admin, user: applicant, reason: "no", now: harness.now)
        }
        // already approved
        try submit(&harness, applicant)
        try harness.decide { try $0.decideVerificationApproval(administrator: admin, user: applicant, now: $1) }
        expectAccountError(.verificationNotPending) {
            try harness.store.decideVerificationApproval(administrator: admin, user: applicant, now: harness.now)
        }
        expectAccountError(.verificationNotPending) {
            try harness.store.decideVerificationRejection(administrator: admin, user: applicant, reason: "no", now: harness.now)
        }
        #expect(harness.store.canRunErrands(applicant))
    }

    /// An administrator whose account another partition holds, vouched for by it for one
    /// command: the copy made for it decides, and records who decided; the store kept does not
    /// take them for an administrator.
    @Test func anAdministratorOfAnotherPartitionDecidesOnTheCopyVouchingForThem() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let applicant = fixture.applicant
        let elsewhere = UserID(rawValue: 9_001)
        try submit(&harness, applicant)
        expectAccountError(.forbidden) {
            try harness.store.decideVerificationApproval(administrator: elsewhere, user: applicant, now: harness.now)
        }
        let vouched = harness.store.vouching(for: elsewhere)
        #expect(try vouched.pendingVerifications(viewer: elsewhere).map(\.id) == [applicant])
        let event = try vouched.decideVerificationApproval(administrator: elsewhere, user: applicant, now: harness.now)
        harness.commit(event)
        #expect(harness.store.state.accounts[applicant]?.verification?.decidedBy == elsewhere)
        #expect(!harness.store.isAdministrator(elsewhere) && harness.store.vouchedAdministrator == nil)
        #expect(!vouched.isAdministrator(applicant), "the vouch is for one user")
    }

    @Test func nonAdministratorsCannotDecide() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let applicant = fixture.applicant
        let other = try harness.logIn("13900139000").user
        try submit(&harness, applicant)
        for actor in [other, applicant] {
            expectAccountError(.forbidden) {
                try harness.store.decideVerificationApproval(administrator: actor, user: applicant, now: harness.now)
            }
            expectAccountError(.forbidden) {
                try harness.store.decideVerificationRejection(administrator: actor, user: applicant, reason: "x",
                                                              now: harness.now)
            }
            expectAccountError(.forbidden) { try harness.store.pendingVerifications(viewer: actor) }
        }
        #expect(harness.store.state.accounts[applicant]?.verification?.status == .pending)
    }

    @Test func rejectionReasonLimits() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let applicant = fixture.applicant
        try submit(&harness, applicant)
        for bad in ["", "  ", String(repeating: "r", count: 201)] {
            expectAccountError(.invalidField, field: "reason") {
                try harness.store.decideVerificationRejection(administrator: admin, user: applicant, reason: bad,
                                                              now: harness.now)
            }
        }
        #expect(throws: Never.self) {
            try harness.store.decideVerificationRejection(administrator: admin, user: applicant,
                                                          reason: String(repeating: "r", count: 200), now: harness.now)
        }
    }

    @Test func applicationFieldLimits() throws {
        let (harness, _, applicant) = try setUp(campuses: ["东校区"])
        func attempt(name: String = "张三", number: String = "2024001", school: String = "东校区") throws -> AccountEvent {
            try harness.store.decideVerificationSubmission(user: applicant, realName: name, studentID: number,
                                                           school: school, now: harness.now)
        }
        #expect(throws: Never.self) { try attempt(name: String(repeating: "名", count: 40)) }
        #expect(throws: Never.self) { try attempt(number: String(repeating: "7", count: 32)) }
        expectAccountError(.invalidField, field: "real_name") { try attempt(name: String(repeating: "名", count: 41)) }
        expectAccountError(.invalidField, field: "real_name") { try attempt(name: "") }
        expectAccountError(.invalidField, field: "real_name") { try attempt(name: "张\u{0}三") }
        expectAccountError(.invalidField, field: "student_id") { try attempt(number: String(repeating: "7", count: 33)) }
        expectAccountError(.invalidField, field: "student_id") { try attempt(number: "") }
        expectAccountError(.invalidField, field: "student_id") { try attempt(number: "20 24") }
        expectAccountError(.invalidField, field: "student_id") { try attempt(number: "２０２４") }
        expectAccountError(.invalidField, field: "school") { try attempt(school: "西校区") }
        expectAccountError(.invalidField, field: "school") { try attempt(school: "") }
    }

    @Test func pendingListIsOldestFirstWithRealNames() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let first = fixture.applicant
        let second = try harness.logIn("13900139000").user
        let third = try harness.logIn("13700137000").user
        try submit(&harness, second)
        harness.advance(seconds: 1)
        try submit(&harness, first)
        harness.advance(seconds: 1)
        try submit(&harness, third)
        try harness.decide { try $0.decideVerificationApproval(administrator: admin, user: third, now: $1) }
        let pending = try harness.store.pendingVerifications(viewer: admin)
        #expect(pending.map(\.id) == [second, first])
        #expect(pending.first?.verification?.realName == "张三")
        #expect(pending.first?.phone?.rawValue == "+8613900139000")
    }

    @Test func administratorsGrantAndRevoke() throws {
        let fixture = try setUp()
        var harness = fixture.0
        let admin = fixture.admin
        let applicant = fixture.applicant
        let helper = try harness.logIn("13900139000").user
        expectAccountError(.forbidden) { try harness.store.decideAdministratorGrant(by: helper, to: helper, now: harness.now) }
        let grant = try harness.store.decideAdministratorGrant(by: admin, to: helper, now: harness.now)
        harness.commit(grant)
        #expect(grant.recipients == [helper])
        #expect(harness.store.isAdministrator(helper))
        expectAccountError(.administratorUnchanged) {
            try harness.store.decideAdministratorGrant(by: admin, to: helper, now: harness.now)
        }
        expectAccountError(.administratorUnchanged) {
            try harness.store.decideAdministratorGrant(by: helper, to: admin, now: harness.now)
        }
        // A granted administrator decides verifications…
        try submit(&harness, applicant)
        try harness.decide { try $0.decideVerificationApproval(administrator: helper, user: applicant, now: $1) }
        // …but cannot remove the configured one.
        expectAccountError(.forbidden) { try harness.store.decideAdministratorRevocation(by: helper, from: admin, now: harness.now) }
        try harness.decide { try $0.decideAdministratorRevocation(by: admin, from: helper, now: $1) }
        #expect(!harness.store.isAdministrator(helper))
        expectAccountError(.administratorUnchanged) {
            try harness.store.decideAdministratorRevocation(by: admin, from: helper, now: harness.now)
        }
        expectAccountError(.forbidden) { try harness.store.decideAdministratorGrant(by: helper, to: applicant, now: harness.now) }
        expectAccountError(.notFound) { try harness.store.decideAdministratorGrant(by: admin, to: UserID(999), now: harness.now) }
    }
}
