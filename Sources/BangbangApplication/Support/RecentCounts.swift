// How many times something happened per key in the last minute, for the operator console's
// "publishes per minute": sixty one-second buckets per key, reused as the minute moves on, so
// recording costs one lock and no allocation. Any thread.
import BangbangCore
import Synchronization

package final class RecentCounts<Key: Hashable & Sendable>: Sendable {
    static var windowSeconds: Int { 60 }

    private struct Ring {
        var counts = [Int](repeating: 0, count: RecentCounts.windowSeconds)
        /// The second each bucket counts; a bucket of an older second is stale.
        var seconds = [Int64](repeating: .min / 2, count: RecentCounts.windowSeconds)

        mutating func record(second: Int64, slot: Int) {
            if seconds[slot] != second {
                seconds[slot] = second
                counts[slot] = 0
            }
            counts[slot] += 1
        }
    }

    private let rings = Mutex<[Key: Ring]>([:])

    func record(_ key: Key, at now: Timestamp) {
        let second = now.rawValue / 1000
        let slot = Int(second.quotientAndRemainder(dividingBy: Int64(Self.windowSeconds)).remainder.magnitude)
        rings.withLock { rings in
            rings[key, default: Ring()].record(second: second, slot: slot)
        }
    }

    /// Events of `key` in the minute before `now`.
    package func count(_ key: Key, at now: Timestamp) -> Int {
        let second = now.rawValue / 1000
        return rings.withLock { rings in
            guard let ring = rings[key] else { return 0 }
            var total = 0
            for slot in 0..<Self.windowSeconds where second - ring.seconds[slot] < Int64(Self.windowSeconds) {
                total += ring.counts[slot]
            }
            return total
        }
    }
}
