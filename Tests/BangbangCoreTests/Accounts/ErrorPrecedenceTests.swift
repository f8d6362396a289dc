import Testing
@testable import BangbangCore

/// The accounts part answers in the order of protocol/README.md, "Error precedence": a login a
/// request needs, then its fields, then who may do it, what it names and the state, and the SMS
/// and password limits last; and every `rate_limited` says how long to wait.
@Suite struct AccountErrorPrecedenceTests {
    let phone = "13800138000"

    /// The error `body` throws (failing the test when it throws none).
    func error(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> DomainError? {
        do {
            try body()
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch let error as DomainError {
            return error
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func aChangePhoneCodeWithoutALoginIsUnauthenticatedBeforeABadPhone() {
        var harness = AccountHarness()
        let refused = error { try harness.requestCode("not a phone", purpose: .changePhone, requester: nil) }
        #expect(refused?.code == .unauthenticated)
    }

    @Test func aTakenPhoneIsReportedBeforeTheSendLimitAndUsesNoSend() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13900139000").user
        _ = try harness.logIn(phone)
        // A login code to the other account's phone a moment ago: the 60 s spacing is running.
        harness.store.apply(.codeIssued(try harness.store.decideCodeRequest(
            phone: phone, purpose: .login, requester: nil, clientIP: "10.9.9.9", now: harness.now, using: &harness.generator)))
        #expect(error { try harness.requestCode(phone, purpose: .changePhone, requester: user) }?.code == .phoneTaken)
        // A refused request used up nothing: a free phone still gets its code at once.
        #expect(throws: Never.self) { try harness.requestCode("13700137000", purpose: .changePhone, requester: user) }
    }

    @Test func theSendSpacingIsSharedAcrossPurposesAndSaysHowLongToWait() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13900139000").user
        _ = try harness.requestCode(phone)
        harness.advance(milliseconds: 15_000)
        let refused = error { try harness.requestCode(phone, purpose: .changePhone, requester: user) }
        #expect(refused?.code == .rateLimited)
        #expect(refused?.retryAfterMilliseconds == 45_000)
        harness.advance(milliseconds: 45_000)
        #expect(throws: Never.self) { try harness.requestCode(phone, purpose: .changePhone, requester: user) }
    }

    @Test func theDailyAndPerAddressLimitsSayWhenTheOldestCountingSendLeavesTheWindow() throws {
        var harness = AccountHarness()
        let first = harness.now
        for index in 0..<10 {
            harness.clientIP = "10.0.1.\(index)"
            _ = try harness.requestCode(phone)
            harness.advance(seconds: 61)
        }
        let daily = error { try harness.requestCode(phone) }
        #expect(daily?.code == .rateLimited)
        #expect(daily?.retryAfterMilliseconds == first.milliseconds + 24 * 3_600_000 - harness.now.milliseconds)

        var perAddress = AccountHarness(policy: AccountPolicy(codeLimitPerIP: 2))
        let start = perAddress.now
        _ = try perAddress.requestCode("13700137000")
        perAddress.advance(seconds: 10)
        _ = try perAddress.requestCode("13600136000")
        perAddress.advance(seconds: 20)
        let hourly = error { try perAddress.requestCode("13500135000") }
        #expect(hourly?.code == .rateLimited)
        #expect(hourly?.retryAfterMilliseconds == start.milliseconds + 3_600_000 - perAddress.now.milliseconds)
    }

    @Test func aPasswordLockSaysWhenItEnds() throws {
        var harness = AccountHarness()
        _ = try harness.logIn(phone)
        for _ in 0..<5 {
            let challenge = try harness.store.passwordChallenge(phone: phone, now: harness.now)
            _ = try? harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: false, device: nil,
                                                               now: harness.now, using: &harness.generator))
        }
        harness.advance(seconds: 60)
        let locked = error { _ = try harness.store.passwordChallenge(phone: phone, now: harness.now) }
        #expect(locked?.code == .rateLimited)
        #expect(locked?.retryAfterMilliseconds == Int64(14 * 60 * 1000))
    }

    @Test func aBadDeviceNameIsAFieldErrorEvenWhilePasswordLoginIsLocked() throws {
        var harness = AccountHarness()
        _ = try harness.logIn(phone)
        let challenge = try harness.store.passwordChallenge(phone: phone, now: harness.now)
        for _ in 0..<5 {
            _ = try? harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: false, device: nil,
                                                               now: harness.now, using: &harness.generator))
        }
        let decision = harness.store.decidePasswordLogin(challenge, passwordMatches: true, device: "bad\u{7}name",
                                                         now: harness.now, using: &harness.generator)
        expectAccountError(.invalidField, field: "device") { try harness.run(decision) }
    }

    @Test func verificationFieldsAreCheckedBeforeTheApplicationState() throws {
        var harness = AccountHarness()
        let user = try harness.logIn(phone).user
        try harness.decide { store, now in
            try store.decideVerificationSubmission(user: user, realName: "Li", studentID: "S1", school: "North", now: now)
        }
        expectAccountError(.verificationInProgress) {
            try harness.store.decideVerificationSubmission(user: user, realName: "Li", studentID: "S1", school: "North",
                                                           now: harness.now)
        }
        expectAccountError(.invalidField, field: "student_id") {
            try harness.store.decideVerificationSubmission(user: user, realName: "Li", studentID: "S 1", school: "North",
                                                           now: harness.now)
        }
    }

    @Test func aRejectionReasonOutOfItsLimitsIsAFieldErrorBeforeForbidden() throws {
        var harness = AccountHarness()
        let user = try harness.logIn(phone).user
        expectAccountError(.forbidden) {
            try harness.store.decideVerificationRejection(administrator: user, user: user, reason: "no", now: harness.now)
        }
        expectAccountError(.invalidField, field: "reason") {
            try harness.store.decideVerificationRejection(administrator: user, user: user,
                                                          reason: String(repeating: "x", count: 201), now: harness.now)
        }
    }

    @Test func aRateLimitedErrorAlwaysCarriesANonNegativeWait() {
        #expect(DomainError.rateLimited("slow down", retryAfterMilliseconds: -5).retryAfterMilliseconds == 0)
        #expect(DomainError.rateLimited("slow down", retryAfterMilliseconds: 1_500).code == .rateLimited)
        #expect(DomainError(.invalidField, "x").retryAfterMilliseconds == nil)
    }
}
