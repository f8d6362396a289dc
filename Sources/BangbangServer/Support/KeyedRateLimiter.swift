// One token bucket per key (a user, a client address), shared by every loop behind one lock.
// A key's bucket is dropped once it would have refilled completely, so the table holds only
// keys active in the last few seconds: an address that connects once a day costs nothing.
final class KeyedRateLimiter<Key: Hashable & Sendable>: Sendable {
    let ratePerSecond: Int
    let capacity: Int
    private let state = Mutex<(buckets: [Key: TokenBucket], lastSweep: Int64)>(([:], 0))

    /// `ratePerSecond` 0 admits everything without taking the lock.
    init(ratePerSecond: Int, capacity: Int) {
        self.ratePerSecond = ratePerSecond
        self.capacity = max(1, capacity)
    }

    /// How long an idle bucket takes to fill up again, after which forgetting it changes nothing.
    private var refillMilliseconds: Int64 {
        ratePerSecond == 0 ? 0 : (Int64(capacity) * 1000 + Int64(ratePerSecond) - 1) / Int64(ratePerSecond)
    }

    /// Takes one token from `key`'s bucket at `now` (milliseconds, monotonic).
    func admit(_ key: Key, now: Int64) -> Bool {
        guard ratePerSecond > 0 else { return true }
        let forgetAfter = refillMilliseconds
        return state.withLock { state in
            if now - state.lastSweep >= max(1_000, forgetAfter) {
                state.buckets = state.buckets.filter { now - $0.value.lastTakenAt < forgetAfter }
                state.lastSweep = now
            }
            var bucket = state.buckets[key] ?? TokenBucket(ratePerSecond: ratePerSecond, capacity: capacity, now: now)
            let admitted = bucket.take(now: now)
            state.buckets[key] = bucket
            return admitted
        }
    }

    /// Keys with a bucket now (for tests).
    var trackedKeyCount: Int { state.withLock { $0.buckets.count } }
}
