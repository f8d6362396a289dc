// A token bucket: `capacity` tokens, refilled at `ratePerSecond`, one taken per event. It allows
// bursts up to the capacity and a sustained rate of `ratePerSecond`, which is what request and
// handshake limits want: a client that opens a screen may fire a dozen requests at once, but not
// keep it up. Pure: the caller passes `now` (milliseconds on any monotonic clock), so it is
// tested with explicit times and costs no clock read of its own.
//
// One is kept per connection (and per user, per address), so the rate and the capacity are
// stored in 32 bits each: a bucket takes 24 bytes, an optional one 25.
package struct TokenBucket: Sendable, Equatable {
    /// Tokens scaled by 1000 so refills of a fraction of a token are kept without floating point.
    private var milliTokens: Int
    private var updatedAt: Int64
    private let storedRate: Int32
    private let storedCapacity: Int32

    package var ratePerSecond: Int { Int(storedRate) }
    package var capacity: Int { Int(storedCapacity) }

    /// A full bucket as of `now`. A rate of 0 means "no limit".
    package init(ratePerSecond: Int, capacity: Int, now: Int64) {
        precondition(ratePerSecond >= 0 && capacity >= 1, "a token bucket needs a rate ≥ 0 and a capacity ≥ 1")
        precondition(ratePerSecond <= Int(Int32.max) && capacity <= Int(Int32.max),
                     "a token bucket's rate and capacity fit in 32 bits")
        self.storedRate = Int32(ratePerSecond)
        self.storedCapacity = Int32(capacity)
        self.milliTokens = capacity * 1000
        self.updatedAt = now
    }

    package var isUnlimited: Bool { ratePerSecond == 0 }

    /// Whole tokens available at the last update (for tests and logs).
    package var available: Int { milliTokens / 1000 }

    /// Takes one token if there is one at `now`; false (and nothing taken) otherwise. A `now`
    /// earlier than the last call (a clock step) refills nothing rather than draining.
    package mutating func take(now: Int64) -> Bool {
        if isUnlimited { return true }
        refill(now: now)
        guard milliTokens >= 1000 else { return false }
        milliTokens -= 1000
        return true
    }

    /// How long from `now` until `take` would succeed: 0 when a token is there, else the time
    /// the refill needs for the missing fraction of one (what a refused client is told to wait).
    package func millisecondsUntilToken(now: Int64) -> Int64 {
        if isUnlimited { return 0 }
        var projected = self
        projected.refill(now: now)
        guard projected.milliTokens < 1000 else { return 0 }
        let missing = Int64(1000 - projected.milliTokens)
        let rate = Int64(ratePerSecond)
        return (missing + rate - 1) / rate + max(0, projected.updatedAt - now)
    }

    private mutating func refill(now: Int64) {
        guard now > updatedAt else { return }
        let elapsed = now - updatedAt
        // Tokens per millisecond × 1000 = ratePerSecond; cap the product to avoid overflow after
        // a long idle period.
        let gained = elapsed >= Int64(capacity) * 1000 ? capacity * 1000 : Int(elapsed) * ratePerSecond
        milliTokens = min(capacity * 1000, milliTokens + gained)
        updatedAt = now
    }
}
