import Testing
import TestSupport
@testable import BangbangCore

@Suite struct SMSCodeTests {
    let phone = "13800138000"

    @Test func issuesSixDigitCodeThatExpiresInFiveMinutes() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        #expect(issue.code.count == 6 && issue.code.allSatisfy(\.isASCII) && issue.code.allSatisfy(\.isNumber))
        #expect(issue.phone.rawValue == "+8613800138000")
        #expect(issue.expiresAt == harness.now.adding(milliseconds: 5 * 60 * 1000))
        #expect(issue.purpose == .login && issue.clientIP == harness.clientIP)
    }

    @Test func codesComeFromTheGivenGenerator() throws {
        var first = AccountHarness()
        var second = AccountHarness()
        #expect(try first.requestCode(phone).code == second.requestCode(phone).code)
        var other = AccountHarness()
        other.generator = SeededGenerator(seed: 7)
        _ = try other.requestCode(phone)  // a different seed is allowed to coincide, but not all of these
        let codes = try (0..<5).map { index -> String in
            other.advance(seconds: 61)
            return try other.requestCode(phone).code
        }
        #expect(Set(codes).count > 1)
    }

    @Test func codeWorksOneMillisecondBeforeExpiry() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        harness.now = issue.expiresAt.adding(milliseconds: -1)
        #expect(throws: Never.self) { try harness.codeLogin(phone, code: issue.code) }
    }

    @Test func codeIsRefusedAtExpiry() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        harness.now = issue.expiresAt
        expectAccountError(.codeExpired, field: "code") { try harness.codeLogin(phone, code: issue.code) }
        #expect(harness.journal.isEmpty)
    }

    @Test func codeIsSingleUse() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        _ = try harness.codeLogin(phone, code: issue.code)
        expectAccountError(.codeExpired) { try harness.codeLogin(phone, code: issue.code) }
        #expect(harness.journal.count == 1)
    }

    @Test func fourWrongTriesLeaveTheCodeUsable() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        for _ in 0..<4 {
            expectAccountError(.codeIncorrect, field: "code") { try harness.codeLogin(phone, code: wrongSMSCode(issue.code)) }
        }
        #expect(throws: Never.self) { try harness.codeLogin(phone, code: issue.code) }
    }

    @Test func fifthWrongTryKillsTheCode() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        for _ in 0..<5 {
            expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: wrongSMSCode(issue.code)) }
        }
        expectAccountError(.codeExpired) { try harness.codeLogin(phone, code: issue.code) }
        #expect(harness.journal.isEmpty)
    }

    @Test func codeWithExtraOrMissingDigitsIsWrong() throws {
        var harness = AccountHarness()
        let issue = try harness.requestCode(phone)
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: issue.code + "0") }
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: String(issue.code.dropLast())) }
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: issue.code + String(repeating: "9", count: 10_000)) }
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: "") }
        #expect(throws: Never.self) { try harness.codeLogin(phone, code: issue.code) }
    }

    @Test func loginWithoutAnyCodeIsRefused() {
        var harness = AccountHarness()
        expectAccountError(.codeExpired) { try harness.codeLogin(phone, code: "123456") }
    }

    @Test func newCodeReplacesThePendingOne() throws {
        var harness = AccountHarness()
        let old = try harness.requestCode(phone)
        harness.advance(seconds: 60)
        let new = try harness.requestCode(phone)
        try #require(old.code != new.code)
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: old.code) }
        #expect(throws: Never.self) { try harness.codeLogin(phone, code: new.code) }
    }

    @Test func loginCodeDoesNotChangePhone() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13900139000").user
        let issue = try harness.requestCode(phone)  // purpose login
        let decision = harness.store.decidePhoneChange(user: user, newPhone: phone, code: issue.code, now: harness.now)
        expectAccountError(.codeExpired) { try harness.run(decision) }
    }

    @Test func resendWithinSixtySecondsIsRateLimited() throws {
        var harness = AccountHarness()
        _ = try harness.requestCode(phone)
        harness.advance(milliseconds: 59_999)
        expectAccountError(.rateLimited) { try harness.requestCode(phone) }
        expectAccountError(.rateLimited) { try harness.requestCode("+86 138-0013-8000") }  // same number, other spelling
        harness.advance(milliseconds: 1)
        #expect(throws: Never.self) { try harness.requestCode(phone) }
    }

    @Test func resendSpacingSpansPurposes() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13900139000").user
        _ = try harness.requestCode(phone)
        expectAccountError(.rateLimited) { try harness.requestCode(phone, purpose: .changePhone, requester: user) }
    }

    @Test func tenCodesPerPhonePerDayThenRefused() throws {
        var harness = AccountHarness()
        for index in 0..<10 {
            harness.clientIP = "10.0.1.\(index)"
            _ = try harness.requestCode(phone)
            harness.advance(seconds: 61)
        }
        harness.clientIP = "10.0.2.1"
        expectAccountError(.rateLimited) { try harness.requestCode(phone) }
        #expect(throws: Never.self) { try harness.requestCode("13900139000") }
    }

    @Test func dailyCapIsARollingWindow() throws {
        var harness = AccountHarness()
        let first = harness.now
        for index in 0..<10 {
            harness.clientIP = "10.0.1.\(index)"
            _ = try harness.requestCode(phone)
            harness.advance(seconds: 61)
        }
        harness.now = first.adding(milliseconds: 24 * 3600 * 1000 - 1)
        expectAccountError(.rateLimited) { try harness.requestCode(phone) }
        harness.now = first.adding(milliseconds: 24 * 3600 * 1000)
        #expect(throws: Never.self) { try harness.requestCode(phone) }
        harness.advance(seconds: 60)
        expectAccountError(.rateLimited) { try harness.requestCode(phone) }  // only the oldest send left the window
    }

    @Test func twentySendsPerIPPerHourThenRefused() throws {
        var harness = AccountHarness()
        let first = harness.now
        for index in 0..<20 {
            _ = try harness.requestCode("1380013\(String(1000 + index))")
        }
        expectAccountError(.rateLimited) { try harness.requestCode("13900139000") }
        harness.clientIP = "10.0.0.2"
        #expect(throws: Never.self) { try harness.requestCode("13900139000") }
        harness.clientIP = "10.0.0.1"
        harness.now = first.adding(milliseconds: 3600 * 1000 - 1)
        expectAccountError(.rateLimited) { try harness.requestCode("13700137000") }
        harness.now = first.adding(milliseconds: 3600 * 1000)
        #expect(throws: Never.self) { try harness.requestCode("13700137000") }
    }

    @Test func refusedRequestsDoNotCountAgainstLimits() throws {
        var harness = AccountHarness(policy: AccountPolicy(codeLimitPerIP: 2))
        _ = try harness.requestCode(phone)
        for _ in 0..<5 { expectAccountError(.rateLimited) { try harness.requestCode(phone) } }
        #expect(throws: Never.self) { try harness.requestCode("13900139000") }
    }

    @Test func limitsFollowThePolicy() throws {
        var harness = AccountHarness(policy: AccountPolicy(codeLifetime: .seconds(10), codeMaxWrongAttempts: 2,
                                                           codeResendInterval: .seconds(1)))
        let issue = try harness.requestCode(phone)
        #expect(issue.expiresAt == harness.now.adding(milliseconds: 10_000))
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: wrongSMSCode(issue.code)) }
        expectAccountError(.codeIncorrect) { try harness.codeLogin(phone, code: wrongSMSCode(issue.code)) }
        expectAccountError(.codeExpired) { try harness.codeLogin(phone, code: issue.code) }
        harness.advance(seconds: 1)
        #expect(throws: Never.self) { try harness.requestCode(phone) }
    }

    @Test func malformedPhoneIsRefusedBeforeAnySend() {
        var harness = AccountHarness()
        expectAccountError(.invalidField, field: "phone") { try harness.requestCode("12345") }
    }

    @Test func staleCountersAreSweptAway() throws {
        var harness = AccountHarness(policy: AccountPolicy(codeResendInterval: .zero, codeDailyLimitPerPhone: 100_000,
                                                           codeLimitPerIP: 100_000))
        for index in 0..<AccountThrottle.sweepInterval {
            _ = try harness.requestCode("+8613\(String(100_000_000 + index))")
        }
        harness.advance(seconds: 2 * 24 * 3600)
        for index in 0..<AccountThrottle.sweepInterval {
            _ = try harness.requestCode("+8615\(String(100_000_000 + index))")
        }
        #expect(harness.store.throttle.sendsByPhone.count <= AccountThrottle.sweepInterval)
        #expect(harness.store.throttle.pendingCodes.count <= AccountThrottle.sweepInterval)
    }
}
