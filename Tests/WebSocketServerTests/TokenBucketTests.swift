import Forwarding
import Testing
@testable import WebSocketServer

private func ip(_ text: String) -> IPAddress { IPAddress(text)! }

/// Takes outside the `#expect` macro, which cannot mutate its operands.
private func take(_ bucket: inout TokenBucket, _ now: Int64) -> Bool {
    bucket.take(now: now)
}

@Suite struct TokenBucketTests {
    @Test func aFullBucketAdmitsItsCapacityAtOnceAndThenRefuses() {
        var bucket = TokenBucket(ratePerSecond: 50, capacity: 100, now: 1_000)
        for _ in 0..<100 { #expect(take(&bucket, 1_000)) }
        #expect(!take(&bucket, 1_000))
        #expect(bucket.available == 0)
    }

    @Test func tokensComeBackAtTheRateIncludingFractions() {
        var bucket = TokenBucket(ratePerSecond: 50, capacity: 100, now: 0)
        for _ in 0..<100 { _ = bucket.take(now: 0) }
        // 50/s is one token per 20 ms: 19 ms is not enough, 20 ms is exactly one.
        #expect(!take(&bucket, 19))
        #expect(take(&bucket, 20))
        #expect(!take(&bucket, 20))
        // The 19 ms of the refused attempt were not lost: 10 ms later (30 ms since 20) gives one more.
        #expect(!take(&bucket, 39))
        #expect(take(&bucket, 40))
    }

    @Test func refillStopsAtCapacityAfterALongIdle() {
        var bucket = TokenBucket(ratePerSecond: 3, capacity: 5, now: 0)
        for _ in 0..<5 { _ = bucket.take(now: 0) }
        let later: Int64 = 86_400_000 * 365
        for _ in 0..<5 { #expect(take(&bucket, later)) }
        #expect(!take(&bucket, later))
    }

    @Test func aClockThatStepsBackRefillsNothing() {
        var bucket = TokenBucket(ratePerSecond: 10, capacity: 1, now: 10_000)
        #expect(take(&bucket, 10_000))
        #expect(!take(&bucket, 5_000))
        #expect(!take(&bucket, 10_050))
        #expect(take(&bucket, 10_100))
    }

    @Test func rateZeroMeansUnlimited() {
        var bucket = TokenBucket(ratePerSecond: 0, capacity: 1, now: 0)
        for _ in 0..<10_000 { #expect(take(&bucket, 0)) }
    }

    @Test func keyedLimiterKeepsKeysApartAndForgetsIdleOnes() {
        let limiter = KeyedRateLimiter<String>(ratePerSecond: 1, capacity: 2)
        #expect(limiter.admit("a", now: 0))
        #expect(limiter.admit("a", now: 0))
        #expect(!limiter.admit("a", now: 0))
        #expect(limiter.admit("b", now: 0))
        #expect(limiter.trackedKeyCount == 2)
        // Two seconds refill a bucket of two at 1/s: both are forgotten at the next sweep,
        // and a forgotten key starts full again.
        #expect(limiter.admit("c", now: 2_500))
        #expect(limiter.trackedKeyCount == 1)
        #expect(limiter.admit("a", now: 2_500))
        #expect(limiter.admit("a", now: 2_500))
        #expect(!limiter.admit("a", now: 2_500))
    }

    @Test func addressLimiterRefusesHandshakesAboveTheRatePerAddress() {
        let limiter = AddressLimiter(limit: 10, handshakesPerSecond: 2)
        for _ in 0..<4 { #expect(limiter.admitHandshake(from: ip("10.0.0.1"), now: 0)) }
        #expect(!limiter.admitHandshake(from: ip("10.0.0.1"), now: 0))
        #expect(limiter.admitHandshake(from: ip("10.0.0.2"), now: 0))
        #expect(limiter.admitHandshake(from: ip("10.0.0.1"), now: 500))
    }

    @Test func addressLimiterWithoutARateAdmitsEveryHandshake() {
        let limiter = AddressLimiter(limit: 1)
        for _ in 0..<1_000 { #expect(limiter.admitHandshake(from: ip("::1"), now: 0)) }
    }
}

@Suite struct LimiterReloadTests {
    @Test func keyedLimiterTakesNewRatesAndStartsKeysAfresh() {
        let limiter = KeyedRateLimiter<String>(ratePerSecond: 1, capacity: 1)
        #expect(limiter.admit("a", now: 0))
        #expect(!limiter.admit("a", now: 0))
        limiter.update(ratePerSecond: 5, capacity: 3)
        #expect(limiter.ratePerSecond == 5 && limiter.capacity == 3)
        #expect((0..<3).allSatisfy { _ in limiter.admit("a", now: 0) })
        #expect(!limiter.admit("a", now: 0))
        limiter.update(ratePerSecond: 0, capacity: 0)
        #expect((0..<100).allSatisfy { _ in limiter.admit("a", now: 0) }, "0 means no limit")
    }

    @Test func addressLimiterTakesANewConnectionLimit() {
        let limiter = AddressLimiter(limit: 1)
        #expect(limiter.acquire(ip("10.0.0.1")))
        #expect(!limiter.acquire(ip("10.0.0.1")))
        limiter.update(limit: 2, handshakesPerSecond: 0)
        #expect(limiter.acquire(ip("10.0.0.1")))
        limiter.update(limit: 1, handshakesPerSecond: 1)
        #expect(!limiter.acquire(ip("10.0.0.1")), "over a lowered limit: no new connection until some close")
        limiter.release(ip("10.0.0.1"))
        limiter.release(ip("10.0.0.1"))
        #expect(limiter.acquire(ip("10.0.0.1")))
        #expect(limiter.admitHandshake(from: ip("10.0.0.1"), now: 0))
        #expect(limiter.admitHandshake(from: ip("10.0.0.1"), now: 0))
        #expect(!limiter.admitHandshake(from: ip("10.0.0.1"), now: 0), "burst of twice the new rate")
    }

    @Test func aRefusalSaysHowLongUntilTheNextToken() {
        var bucket = TokenBucket(ratePerSecond: 50, capacity: 2, now: 0)
        #expect(bucket.millisecondsUntilToken(now: 0) == 0)
        _ = bucket.take(now: 0)
        _ = bucket.take(now: 0)
        #expect(!take(&bucket, 0))
        // 50/s is a token per 20 ms; 7 ms later 13 ms are left, and the wait is then exactly enough.
        #expect(bucket.millisecondsUntilToken(now: 0) == 20)
        #expect(bucket.millisecondsUntilToken(now: 7) == 13)
        #expect(!take(&bucket, 19))
        #expect(take(&bucket, 20))
        #expect(TokenBucket(ratePerSecond: 0, capacity: 1, now: 0).millisecondsUntilToken(now: 0) == 0)
        var slow = TokenBucket(ratePerSecond: 3, capacity: 1, now: 0)
        _ = slow.take(now: 0)
        #expect(slow.millisecondsUntilToken(now: 0) == 334, "rounded up: 333 ms would still be refused")
        #expect(!take(&slow, 333))
        #expect(take(&slow, 334))
    }

    @Test func keyedLimiterTellsTheWaitOfTheKeyThatWasRefused() {
        let limiter = KeyedRateLimiter<String>(ratePerSecond: 10, capacity: 1)
        #expect(limiter.take("a", now: 0) == nil)
        #expect(limiter.take("a", now: 40) == 60)
        #expect(limiter.take("b", now: 40) == nil)
        #expect(limiter.take("a", now: 100) == nil)
    }

    @Test func aBucketKeepsItsRateAndCapacityInTwentyFourBytes() {
        let bucket = TokenBucket(ratePerSecond: 1_000_000, capacity: 2_000_000, now: 0)
        #expect(bucket.ratePerSecond == 1_000_000 && bucket.capacity == 2_000_000)
        #expect(bucket.available == 2_000_000)
        #expect(MemoryLayout<TokenBucket>.size == 24, "one is kept per connection")
    }
}
