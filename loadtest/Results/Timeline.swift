// Completions per slot of time since the measured phase began: what `--plot` draws as
// throughput over time. Recording is a division and an increment; timelines of several loops
// and processes merge by adding slot by slot, like histograms.

struct Timeline: Equatable, Sendable {
    /// 100 ms: fine enough to show a stall, coarse enough that a slot holds many events.
    static let slotNanoseconds: UInt64 = 100_000_000

    private(set) var origin: UInt64
    private(set) var counts: [Int64] = []

    init(origin: UInt64, counts: [Int64] = []) {
        self.origin = origin
        self.counts = counts
    }

    mutating func record(at nanoseconds: UInt64) {
        guard nanoseconds >= origin else { return }
        let slot = Int((nanoseconds - origin) / Self.slotNanoseconds)
        if slot >= counts.count { counts.append(contentsOf: repeatElement(0, count: slot - counts.count + 1)) }
        counts[slot] &+= 1
    }

    mutating func merge(_ other: Timeline) {
        if other.counts.count > counts.count {
            counts.append(contentsOf: repeatElement(0, count: other.counts.count - counts.count))
        }
        for (slot, count) in other.counts.enumerated() { counts[slot] &+= count }
    }

    var total: Int64 { counts.reduce(0, &+) }
}
