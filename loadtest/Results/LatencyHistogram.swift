// A fixed-size, log-linear latency histogram: recording is an index computation and an
// increment, so the receive path never allocates, and two histograms merge by adding counts
// (how per-loop and per-process results become one).

/// Counts of nanosecond durations in buckets whose width is under 1/64 (≈1.6 %) of their value.
///
/// Values below 128 ns have one bucket each; above that, every power of two [2^m, 2^(m+1)) is
/// split into 64 equal buckets. Percentiles are reported as a bucket's midpoint, so they carry
/// at most ±0.8 % error; `min`, `max` and `sum` are exact.
struct LatencyHistogram: Equatable, Sendable {
    /// 128 linear buckets, then 64 per power of two from 2^7 to 2^63.
    static let bucketCount = 128 + 57 * 64

    private(set) var counts: [UInt64]
    private(set) var count: UInt64 = 0
    private(set) var sum: UInt64 = 0
    private(set) var min: UInt64 = .max
    private(set) var max: UInt64 = 0

    init() {
        counts = [UInt64](repeating: 0, count: Self.bucketCount)
    }

    static func bucketIndex(of value: UInt64) -> Int {
        if value < 128 { return Int(value) }
        let magnitude = 63 - value.leadingZeroBitCount
        let shift = magnitude - 6
        return 128 + (magnitude - 7) * 64 + Int((value >> UInt64(shift)) - 64)
    }

    /// The smallest value that falls into bucket `index`.
    static func lowerBound(ofBucket index: Int) -> UInt64 {
        if index < 128 { return UInt64(index) }
        let magnitude = (index - 128) / 64 + 7
        let offset = UInt64((index - 128) % 64 + 64)
        return offset << UInt64(magnitude - 6)
    }

    /// The number of values bucket `index` covers.
    static func width(ofBucket index: Int) -> UInt64 {
        if index < 128 { return 1 }
        return 1 << UInt64((index - 128) / 64 + 1)
    }

    mutating func record(nanoseconds value: UInt64) {
        counts[Self.bucketIndex(of: value)] &+= 1
        count &+= 1
        sum &+= value
        if value < min { min = value }
        if value > max { max = value }
    }

    mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in 0..<Self.bucketCount where other.counts[index] != 0 {
            counts[index] &+= other.counts[index]
        }
        count &+= other.count
        sum &+= other.sum
        min = Swift.min(min, other.min)
        max = Swift.max(max, other.max)
    }

    /// The value below or at which `percent` % of the recorded values lie (nearest rank), or
    /// nil when nothing was recorded. 100 returns the exact maximum.
    func percentile(_ percent: Double) -> UInt64? {
        precondition((0...100).contains(percent), "a percentile lies in 0...100")
        guard count > 0 else { return nil }
        if percent >= 100 { return max }
        let rank = Swift.max(1, UInt64((percent / 100 * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for index in 0..<Self.bucketCount {
            seen &+= counts[index]
            if seen >= rank {
                let middle = Self.lowerBound(ofBucket: index) + Self.width(ofBucket: index) / 2
                return Swift.min(Swift.max(middle, min), max)
            }
        }
        fatalError("internal inconsistency in LatencyHistogram: counts do not add up to count")
    }

    var mean: Double? { count == 0 ? nil : Double(sum) / Double(count) }

    /// Non-empty buckets as (index, count) pairs, the serialized form.
    var nonEmptyBuckets: [(index: Int, count: UInt64)] {
        var result: [(index: Int, count: UInt64)] = []
        for index in 0..<Self.bucketCount where counts[index] != 0 { result.append((index, counts[index])) }
        return result
    }

    /// Rebuilds a histogram from its serialized parts; nil if they are inconsistent.
    init?(buckets: [(index: Int, count: UInt64)], sum: UInt64, min: UInt64, max: UInt64) {
        self.init()
        for bucket in buckets {
            guard (0..<Self.bucketCount).contains(bucket.index) else { return nil }
            counts[bucket.index] &+= bucket.count
            count &+= bucket.count
        }
        self.sum = sum
        if count > 0 {
            guard min <= max else { return nil }
            self.min = min
            self.max = max
        }
    }
}
