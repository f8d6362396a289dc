import Testing
@testable import BangbangCore

@Suite struct LoginTests {
    static let hash = "scrypt$1$8$1$c2FsdA==$aGFzaA=="
    static let otherHash = "scrypt$1$8$1$c2FsdA==$b3RoZXI="

    @Test func firstCodeLoginRegistersAnAccount() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode("13800138000")
        let event = try harness.codeLogin("138 0013 8000", code: issue.code, device: "iPhone")
        guard case .registered(let registration) = event else {
            Issue.record("expected a registration, got \(event)")
            return
        }
        #expect(registration.user == UserID(1))
        #expect(registration.phone.rawValue == "+8613800138000")
        #expect(registration.session.device == "iPhone")
        #expect(registration.session.expiresAt == harness.now.adding(milliseconds: 30 * 24 * 3600 * 1000))
        let account = try #require(harness.store.state.accounts[UserID(1)])
        #expect(account.profile.nickname == "用户1")
        #expect(account.passwordHash == nil)
        #expect(harness.store.state.userByPhone[registration.phone] == UserID(1))
    }

    @Test func userIDsAreSequentialAndLoginsReuseTheAccount() throws {
        var harness = AccountHarness()
        #expect(try harness.logIn("13800138000").user == UserID(1))
        #expect(try harness.logIn("13900139000").user == UserID(2))
        let issue = try harness.requestCode("13800138000")
        let again = try harness.codeLogin("13800138000", code: issue.code)
        guard case .loggedIn(let login) = again else {
            Issue.record("expected a login, got \(again)")
            return
        }
        #expect(login.session.user == UserID(1) && login.method == .code)
        #expect(harness.store.state.nextUserID == 3)
        #expect(harness.store.state.accounts.count == 2)
    }

    @Test func deviceNameIsLimited() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode("13800138000")
        expectAccountError(.invalidField, field: "device") {
            try harness.codeLogin("13800138000", code: issue.code, device: String(repeating: "d", count: 65))
        }
        expectAccountError(.invalidField, field: "device") {
            try harness.codeLogin("13800138000", code: issue.code, device: "bad\u{7}name")
        }
        // A refused device name does not burn the code.
        let event = try harness.codeLogin("13800138000", code: issue.code, device: String(repeating: "d", count: 64))
        #expect(event.openedSession?.device?.count == 64)
    }

    // MARK: Passwords

    @Test(arguments: [7, 129]) func passwordLengthOutsideLimitsIsRefused(length: Int) {
        expectAccountError(.invalidField, field: "password") {
            try AccountStore.validatePassword(String(repeating: "p", count: length))
        }
    }

    @Test(arguments: [8, 128]) func passwordLengthAtLimitsIsAccepted(length: Int) throws {
        try AccountStore.validatePassword(String(repeating: "密", count: length))
    }

    @Test func setPasswordOnlyOnce() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: Self.hash, now: $1) }
        #expect(harness.store.state.accounts[user]?.passwordHash == Self.hash)
        expectAccountError(.passwordAlreadySet) {
            try harness.store.decideSetPassword(user: user, passwordHash: Self.otherHash, now: harness.now)
        }
    }

    @Test func passwordLoginHandsOutTheStoredHashThenOpensASession() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: Self.hash, now: $1) }
        let challenge = try harness.store.passwordChallenge(phone: "+8613800138000", now: harness.now)
        #expect(challenge.user == user && challenge.passwordHash == Self.hash)
        let event = try harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: true, device: "Pad",
                                                                       now: harness.now, using: &harness.generator))
        guard case .loggedIn(let login) = event else {
            Issue.record("expected a login, got \(event)")
            return
        }
        #expect(login.method == .password && login.session.user == user && login.session.device == "Pad")
    }

    @Test func wrongPasswordUnknownPhoneAndNoPasswordAllLookTheSame() throws {
        var harness = AccountHarness()
        let withPassword = try harness.logIn("13800138000").user
        _ = try harness.logIn("13700137000")  // no password
        try harness.decide { try $0.decideSetPassword(user: withPassword, passwordHash: Self.hash, now: $1) }
        var errors: [DomainError] = []
        for phone in ["13800138000", "13900139000", "13700137000"] {
            let challenge = try harness.store.passwordChallenge(phone: phone, now: harness.now)
            let decision = harness.store.decidePasswordLogin(challenge, passwordMatches: false, device: nil,
                                                             now: harness.now, using: &harness.generator)
            guard case .failure(let error) = decision.outcome else {
                Issue.record("wrong password logged in")
                continue
            }
            errors.append(error)
        }
        #expect(errors.count == 3)
        #expect(Set(errors).count == 1)
        #expect(errors.first?.code == .invalidCredentials)
        // Even a server bug reporting a match cannot log in to an account without a password.
        let challenge = try harness.store.passwordChallenge(phone: "13700137000", now: harness.now)
        #expect(challenge.passwordHash == nil)
        expectAccountError(.invalidCredentials) {
            try harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: true, device: nil,
                                                               now: harness.now, using: &harness.generator))
        }
    }

    @Test func fiveWrongPasswordsLockThePhoneBriefly() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: Self.hash, now: $1) }
        for _ in 0..<5 {
            let challenge = try harness.store.passwordChallenge(phone: "13800138000", now: harness.now)
            expectAccountError(.invalidCredentials) {
                try harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: false, device: nil,
                                                                   now: harness.now, using: &harness.generator))
            }
            harness.advance(seconds: 1)
        }
        expectAccountError(.rateLimited) { try harness.store.passwordChallenge(phone: "13800138000", now: harness.now) }
        // A challenge taken before the lock is refused as well, even with the right password.
        let early = PasswordChallenge(phone: PhoneNumber(rawValue: "+8613800138000"), user: user, passwordHash: Self.hash)
        expectAccountError(.rateLimited) {
            try harness.run(harness.store.decidePasswordLogin(early, passwordMatches: true, device: nil,
                                                               now: harness.now, using: &harness.generator))
        }
        // Code login still works while password login is locked.
        #expect(throws: Never.self) { try harness.logIn("13800138000") }
        harness.advance(seconds: 15 * 60)
        let challenge = try harness.store.passwordChallenge(phone: "13800138000", now: harness.now)
        #expect(throws: Never.self) {
            try harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: true, device: nil,
                                                               now: harness.now, using: &harness.generator))
        }
    }

    @Test func unknownPhonesAreLockedLikeKnownOnes() throws {
        var harness = AccountHarness()
        for _ in 0..<5 {
            let challenge = try harness.store.passwordChallenge(phone: "13900139000", now: harness.now)
            _ = try? harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: false, device: nil,
                                                                    now: harness.now, using: &harness.generator))
        }
        expectAccountError(.rateLimited) { try harness.store.passwordChallenge(phone: "13900139000", now: harness.now) }
    }

    @Test func successResetsTheFailureCount() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: Self.hash, now: $1) }
        func attempt(_ matches: Bool) throws {
            let challenge = try harness.store.passwordChallenge(phone: "13800138000", now: harness.now)
            _ = try? harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: matches, device: nil,
                                                                    now: harness.now, using: &harness.generator))
        }
        for _ in 0..<4 { try attempt(false) }
        try attempt(true)
        for _ in 0..<4 { try attempt(false) }
        #expect(throws: Never.self) { try harness.store.passwordChallenge(phone: "13800138000", now: harness.now) }
    }

    @Test func passwordChangedSinceTheChallengeIsRefused() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: Self.hash, now: $1) }
        let stale = try harness.store.passwordChallenge(phone: "13800138000", now: harness.now)
        let change = try harness.store.passwordChangeChallenge(user: user, now: harness.now)
        try harness.run(harness.store.decideChangePassword(change, oldPasswordMatches: true,
                                                           newPasswordHash: Self.otherHash, now: harness.now))
        expectAccountError(.invalidCredentials) {
            try harness.run(harness.store.decidePasswordLogin(stale, passwordMatches: true, device: nil,
                                                               now: harness.now, using: &harness.generator))
        }
    }

    @Test func changePasswordNeedsTheOldOne() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        expectAccountError(.passwordNotSet) { try harness.store.passwordChangeChallenge(user: user, now: harness.now) }
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: Self.hash, now: $1) }
        let challenge = try harness.store.passwordChangeChallenge(user: user, now: harness.now)
        #expect(challenge.passwordHash == Self.hash)
        expectAccountError(.invalidCredentials, field: "old_password") {
            try harness.run(harness.store.decideChangePassword(challenge, oldPasswordMatches: false,
                                                               newPasswordHash: Self.otherHash, now: harness.now))
        }
        #expect(harness.store.state.accounts[user]?.passwordHash == Self.hash)
        let event = try harness.run(harness.store.decideChangePassword(challenge, oldPasswordMatches: true,
                                                                       newPasswordHash: Self.otherHash, now: harness.now))
        #expect(event == .passwordSet(.init(user: user, passwordHash: Self.otherHash, isChange: true, at: harness.now)))
        #expect(event.recipients == [user])
        #expect(harness.store.state.accounts[user]?.passwordHash == Self.otherHash)
    }
}
