import Testing
@testable import BangbangCore

@Suite struct UserViewTests {
    @Test func phoneAndRealNameOnlyForSelfAndAdministrators() throws {
        var harness = AccountHarness(policy: AccountPolicy(administratorPhones: [PhoneNumber(rawValue: "+8613000000000")]))
        let admin = try harness.logIn("13000000000").user
        let user = try harness.logIn("13800138000").user
        let stranger = try harness.logIn("13900139000").user
        try harness.decide {
            try $0.decideVerificationSubmission(user: user, realName: "张三", studentID: "1", school: "东校区", now: $1)
        }
        try harness.decide { try $0.decideVerificationApproval(administrator: admin, user: user, now: $1) }

        for viewer in [stranger, nil] {
            let view = try harness.store.user(user, viewer: viewer)
            #expect(view.phone == nil && view.verification == nil && view.isAdministrator == nil && view.hasPassword == nil)
            #expect(view.isVerifiedRunner && view.profile.nickname == "用户2")
        }
        for viewer in [user, admin] {
            let view = try harness.store.user(user, viewer: viewer)
            #expect(view.phone?.rawValue == "+8613800138000")
            #expect(view.verification?.realName == "张三")
            #expect(view.isAdministrator == false && view.hasPassword == false)
        }
        #expect(try harness.store.user(admin, viewer: admin).isAdministrator == true)
        expectAccountError(.notFound) { try harness.store.user(UserID(42), viewer: admin) }
    }
}
