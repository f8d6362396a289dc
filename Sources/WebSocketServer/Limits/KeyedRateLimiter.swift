// One token bucket per key (a user, a client address), shared by every loop behind one lock.
// A key's bucket is dropped once it would have refilled completely, so the table holds only
// keys active in the last few seconds: an address that connects once a day costs nothing.
import Synchronization
package final class KeyedRateLimiter<Key: Hashable & Sendable>: Sendable {
    private struct State {
        var ratePerSecond: Int
        var capacity: Int
        var buckets: [Key: Entry] = [:]
        var lastSweep: Int64 = 0
    }

    private struct Entry {
        var bucket: TokenBucket
        /// When a token was last taken (or the bucket made): an idle bucket is full after
        /// `capacity / ratePerSecond` seconds from here.
        var lastTakenAt: Int64
    }

    private let state: Mutex<State>

    /// `ratePerSecond` 0 admits everything.
    package init(ratePerSecond: Int, capacity: Int) {
        state = Mutex(State(ratePerSecond: ratePerSecond, capacity: max(1, capacity)))
    }

    package var ratePerSecond: Int { state.withLock { $0.ratePerSecond } }
    package var capacity: Int { state.withLock { $0.capacity } }

    /// New limits (a configuration reload); every key starts again with a full bucket.
    package func update(ratePerSecond: Int, capacity: Int) {
        state.withLock { state in
            state.ratePerSecond = ratePerSecond
            state.capacity = max(1, capacity)
            state.buckets = [:]
        }
    }

    /// Takes one token from `key`'s bucket at `now` (milliseconds, monotonic).
    package func admit(_ key: Key, now: Int64) -> Bool {
        take(key, now: now) == nil
    }

    /// Takes one token from `key`'s bucket at `now`: nil when admitted, else the milliseconds
    /// until the bucket would admit one.
    package func take(_ key: Key, now: Int64) -> Int64? {
        state.withLock { state -> Int64? in
            guard state.ratePerSecond > 0 else { return nil }
            // How long an idle bucket takes to fill up again, after which forgetting it changes nothing.
            let forgetAfter = (Int64(state.capacity) * 1000 + Int64(state.ratePerSecond) - 1) / Int64(state.ratePerSecond)
            if now - state.lastSweep >= max(1_000, forgetAfter) {
                state.buckets = state.buckets.filter { now - $0.value.lastTakenAt < forgetAfter }
                state.lastSweep = now
            }
            var entry = state.buckets[key]
                ?? Entry(bucket: TokenBucket(ratePerSecond: state.ratePerSecond, capacity: state.capacity, now: now),
                         lastTakenAt: now)
            let admitted = entry.bucket.take(now: now)
            if admitted { entry.lastTakenAt = max(entry.lastTakenAt, now) }
            state.buckets[key] = entry
            return admitted ? nil : entry.bucket.millisecondsUntilToken(now: now)
        }
    }

    /// Keys with a bucket now (for tests).
    package var trackedKeyCount: Int { state.withLock { $0.buckets.count } }
}
