import Testing
import TestSupport
@testable import NATSClient

/// The one timer behind every request's timeout.
@Suite struct RequestDeadlinesTests {
    @Test func requestsWithTheSameTimeoutArmOneTimerAndExpireInOrder() {
        var deadlines = RequestDeadlines()
        #expect(deadlines.add(token: 1, deadline: 2_000) == 2_000)
        #expect(deadlines.add(token: 2, deadline: 2_001) == nil)
        #expect(deadlines.add(token: 3, deadline: 2_005) == nil)
        let early = deadlines.expire(firedFor: 2_000, now: 1_999)
        #expect(early.expired.isEmpty && early.rearm == 2_000)
        let due = deadlines.expire(firedFor: 2_000, now: 2_001)
        #expect(due.expired == [1, 2])
        #expect(due.rearm == 2_005)
        let last = deadlines.expire(firedFor: 2_005, now: 2_010)
        #expect(last.expired == [3] && last.rearm == nil)
        #expect(deadlines.count == 0 && deadlines.armedDeadline == nil)
        #expect(deadlines.add(token: 4, deadline: 3_000) == 3_000)
    }

    @Test func aShorterTimeoutArmsAnEarlierTimerAndTheLaterOneOnlySweeps() {
        var deadlines = RequestDeadlines()
        #expect(deadlines.add(token: 1, deadline: 2_000) == 2_000)
        #expect(deadlines.add(token: 2, deadline: 250) == 250)
        let first = deadlines.expire(firedFor: 250, now: 250)
        #expect(first.expired == [2] && first.rearm == 2_000)
        #expect(deadlines.add(token: 3, deadline: 2_100) == nil)
        // Two timers are armed for 2,000 now: the first to fire does the work, the second finds
        // nothing and arms nothing.
        let second = deadlines.expire(firedFor: 2_000, now: 2_000)
        #expect(second.expired == [1] && second.rearm == 2_100)
        let stale = deadlines.expire(firedFor: 250, now: 2_050)
        #expect(stale.expired.isEmpty && stale.rearm == nil)
        #expect(deadlines.armedDeadline == 2_100)
    }

    /// Against a plain list: every token expires exactly once, at the first firing at or past its
    /// deadline, and while tokens wait a timer is armed no later than the earliest.
    @Test func arbitraryDeadlinesExpireOnceAndAlwaysHaveATimer() {
        var random = SeededGenerator(seed: 7)
        var deadlines = RequestDeadlines()
        var waiting: [UInt64: Int64] = [:]
        var timers: [Int64] = []
        var now: Int64 = 0
        var nextToken: UInt64 = 1
        for _ in 0..<5_000 {
            if random.next() % 3 != 0 {
                let deadline = now + Int64(random.next() % 3_000)
                if let arm = deadlines.add(token: nextToken, deadline: deadline) { timers.append(arm) }
                waiting[nextToken] = deadline
                nextToken += 1
            } else {
                now += Int64(random.next() % 400)
                timers.sort()
                while let timer = timers.first, timer <= now {
                    timers.removeFirst()
                    let (expired, rearm) = deadlines.expire(firedFor: timer, now: now)
                    for token in expired {
                        #expect(waiting.removeValue(forKey: token).map { $0 <= now } == true, "token \(token)")
                    }
                    if let rearm { timers.append(rearm) }
                    timers.sort()
                }
                #expect(!waiting.values.contains { $0 <= now }, "a due token was not expired")
            }
            if let earliest = waiting.values.min() {
                #expect(timers.contains { $0 <= earliest }, "no timer for the earliest deadline")
            }
            #expect(deadlines.count == waiting.count)
        }
    }
}
