import Testing
@testable import BangbangCore

@Suite struct PhoneChangeTests {
    @Test func codeSentToTheNewPhoneMovesTheAccount() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        let issue = try harness.requestCode("13900139000", purpose: .changePhone, requester: user)
        #expect(issue.phone.rawValue == "+8613900139000" && issue.requester == user)
        let event = try harness.run(harness.store.decidePhoneChange(user: user, newPhone: "139 0013 9000",
                                                                    code: issue.code, now: harness.now))
        #expect(event == .phoneChanged(.init(user: user, oldPhone: PhoneNumber(rawValue: "+8613800138000"),
                                             newPhone: PhoneNumber(rawValue: "+8613900139000"), at: harness.now)))
        #expect(event.recipients == [user])
        #expect(harness.store.state.accounts[user]?.phone.rawValue == "+8613900139000")
        harness.advance(seconds: 60)
        #expect(try harness.logIn("13900139000").user == user)
        #expect(try harness.logIn("13800138000").user != user)  // the old number is free for a new account
    }

    @Test func takenPhoneIsRefusedBeforeSending() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        _ = try harness.logIn("13900139000")
        expectAccountError(.phoneTaken, field: "phone") {
            try harness.requestCode("13900139000", purpose: .changePhone, requester: user)
        }
        expectAccountError(.phoneTaken, field: "phone") {
            try harness.requestCode("13800138000", purpose: .changePhone, requester: user)
        }
    }

    @Test func phoneTakenAfterTheCodeWasSentIsRefused() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        let change = try harness.requestCode("13900139000", purpose: .changePhone, requester: user)
        harness.advance(seconds: 61)
        let other = try harness.logIn("13900139000").user  // registers the number meanwhile
        #expect(other != user)
        expectAccountError(.phoneTaken, field: "phone") {
            try harness.run(harness.store.decidePhoneChange(user: user, newPhone: "13900139000", code: change.code,
                                                            now: harness.now))
        }
        #expect(harness.store.state.accounts[user]?.phone.rawValue == "+8613800138000")
        #expect(harness.store.state.userByPhone[PhoneNumber(rawValue: "+8613900139000")] == other)
    }

    @Test func codeRequestedByOneUserDoesNotWorkForAnother() throws {
        var harness = AccountHarness()
        let alice = try harness.logIn("13800138000").user
        let bob = try harness.logIn("13700137000").user
        let issue = try harness.requestCode("13900139000", purpose: .changePhone, requester: alice)
        expectAccountError(.codeExpired) {
            try harness.run(harness.store.decidePhoneChange(user: bob, newPhone: "13900139000", code: issue.code,
                                                            now: harness.now))
        }
        #expect(throws: Never.self) {
            try harness.run(harness.store.decidePhoneChange(user: alice, newPhone: "13900139000", code: issue.code,
                                                            now: harness.now))
        }
    }

    @Test func changePhoneCodeDoesNotLogIn() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        let issue = try harness.requestCode("13900139000", purpose: .changePhone, requester: user)
        expectAccountError(.codeExpired) { try harness.codeLogin("13900139000", code: issue.code) }
    }

    @Test func changePhoneNeedsALogin() {
        var harness = AccountHarness()
        expectAccountError(.unauthenticated) { try harness.requestCode("13900139000", purpose: .changePhone, requester: nil) }
    }

    @Test func wrongCodeCountsAndKills() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        let issue = try harness.requestCode("13900139000", purpose: .changePhone, requester: user)
        for _ in 0..<5 {
            expectAccountError(.codeIncorrect) {
                try harness.run(harness.store.decidePhoneChange(user: user, newPhone: "13900139000",
                                                                code: wrongSMSCode(issue.code), now: harness.now))
            }
        }
        expectAccountError(.codeExpired) {
            try harness.run(harness.store.decidePhoneChange(user: user, newPhone: "13900139000", code: issue.code,
                                                            now: harness.now))
        }
    }
}
