import BangbangCore
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct RecentCountsTests {
    private func at(_ seconds: Double) -> Timestamp { Timestamp(rawValue: Int64(seconds * 1000)) }

    @Test func countsWhatHappenedInTheLastMinutePerKey() {
        let counts = RecentCounts<String>()
        counts.record("a", at: at(1_000))
        counts.record("a", at: at(1_000.5))
        counts.record("a", at: at(1_030))
        counts.record("b", at: at(1_030))
        #expect(counts.count("a", at: at(1_030)) == 3)
        #expect(counts.count("b", at: at(1_030)) == 1)
        #expect(counts.count("c", at: at(1_030)) == 0)
        // 60 s after the first second, its two events have left the window.
        #expect(counts.count("a", at: at(1_059.9)) == 3)
        #expect(counts.count("a", at: at(1_060)) == 1)
        #expect(counts.count("a", at: at(1_090)) == 0)
    }

    @Test func aBucketReusedAMinuteLaterStartsFromZero() {
        let counts = RecentCounts<String>()
        for _ in 0..<5 { counts.record("a", at: at(2_000)) }
        counts.record("a", at: at(2_060))   // the same slot, one minute on
        #expect(counts.count("a", at: at(2_060)) == 1)
    }
}
