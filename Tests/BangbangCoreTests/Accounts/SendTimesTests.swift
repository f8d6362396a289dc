// The send history of one phone (or address) keeps its newest time inline; it must keep exactly
// the times the plain array it replaced kept, or the SMS limits would answer differently.
import Testing
import TestSupport
@testable import BangbangCore

@Suite struct SendTimesTests {
    /// How the history was kept as an array: drop everything before the first time after the
    /// window's start, then add the new time.
    private static func recordInArray(_ time: Timestamp, after windowStart: Timestamp, in times: inout [Timestamp]) {
        if let firstKept = times.firstIndex(where: { $0 > windowStart }) {
            times.removeFirst(firstKept)
        } else {
            times.removeAll()
        }
        times.append(time)
    }

    @Test func keepsWhatTheArrayKept() {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<300 {
            var now = Timestamp(milliseconds: 1_000_000)
            var times = SendTimes(now)
            var model = [now]
            let window = Int64.random(in: 1...500, using: &generator)
            for _ in 0..<30 {
                // Mostly forward, now and then backwards: a clock may step back.
                now = now.adding(milliseconds: Int64.random(in: -20...200, using: &generator))
                let windowStart = now.adding(milliseconds: -window)
                times.record(now, after: windowStart)
                Self.recordInArray(now, after: windowStart, in: &model)
                #expect(Array(times) == model)
                #expect(times.latest == model.last)
            }
        }
    }

    @Test func theSMSLimitsCountThroughIt() throws {
        var harness = AccountHarness(policy: AccountPolicy(codeResendInterval: .seconds(1), codeDailyLimitPerPhone: 3,
                                                           codeDailyWindow: .seconds(100)))
        for _ in 0..<3 {
            try harness.requestCode("13800138000")
            harness.advance(seconds: 10)
        }
        // Sent at 0, 10 and 20 s; at 30 s the oldest of the three leaves the window at 100 s.
        expectAccountError(.rateLimited) { try harness.requestCode("13800138000") }
        do {
            _ = try harness.requestCode("13800138000")
            Issue.record("a fourth code within the window was sent")
        } catch let error as DomainError {
            #expect(error.retryAfterMilliseconds == 70_000)
        }
        harness.advance(seconds: 70)
        #expect(throws: Never.self) { try harness.requestCode("13800138000") }
        #expect(harness.store.throttle.sendTimes(for: PhoneNumber(rawValue: "+8613800138000"))?.count == 3)
    }

    @Test func oneSendNeedsNoArray() {
        // The newest time and an empty array (which shares the empty singleton).
        #expect(MemoryLayout<SendTimes>.stride == 16)
    }

    @Test func sendsAreCountedPerAddressOnlyUnderALimit() throws {
        var limited = AccountHarness(policy: AccountPolicy(codeLimitPerIP: 2))
        var unlimited = AccountHarness(policy: AccountPolicy(codeLimitPerIP: .max))
        for phone in ["13800138000", "13900139000"] {
            try limited.requestCode(phone)
            try unlimited.requestCode(phone)
        }
        expectAccountError(.rateLimited) { try limited.requestCode("13700137000") }
        #expect(throws: Never.self) { try unlimited.requestCode("13700137000") }
        #expect(limited.store.throttle.sendTimes(forIP: limited.clientIP)?.count == 2)
        #expect(unlimited.store.throttle.sendsByIP.isEmpty)
    }
}
