import Testing
@testable import loadtest

@Suite struct LatencyHistogramTests {
    @Test func emptyHistogramHasNoPercentiles() {
        let histogram = LatencyHistogram()
        #expect(histogram.percentile(50) == nil)
        #expect(histogram.mean == nil)
    }

    @Test func smallValuesAreExact() {
        var histogram = LatencyHistogram()
        for value in 1...100 as ClosedRange<UInt64> { histogram.record(nanoseconds: value) }
        #expect(histogram.percentile(50) == 50)
        #expect(histogram.percentile(99) == 99)
        #expect(histogram.percentile(100) == 100)
        #expect(histogram.percentile(0) == 1)
    }

    @Test func percentilesOfLargeValuesStayWithinBucketPrecision() {
        var histogram = LatencyHistogram()
        for value in stride(from: UInt64(1_000), through: 1_000_000, by: 1_000) { histogram.record(nanoseconds: value * 1_000) }
        for (percent, expected) in [(50.0, 500_000_000.0), (90, 900_000_000), (99, 990_000_000), (99.9, 999_000_000)] {
            let reported = Double(histogram.percentile(percent)!)
            #expect(abs(reported - expected) / expected < 0.016, "p\(percent) = \(reported)")
        }
        #expect(histogram.percentile(100) == 1_000_000_000)
    }

    @Test func bucketBoundariesAreContiguous() {
        for index in 0..<(LatencyHistogram.bucketCount - 1) {
            let next = LatencyHistogram.lowerBound(ofBucket: index) + LatencyHistogram.width(ofBucket: index)
            #expect(LatencyHistogram.lowerBound(ofBucket: index + 1) == next)
            #expect(LatencyHistogram.bucketIndex(of: next - 1) == index)
            #expect(LatencyHistogram.bucketIndex(of: next) == index + 1)
        }
        #expect(LatencyHistogram.bucketIndex(of: .max) == LatencyHistogram.bucketCount - 1)
    }

    @Test func percentileIsClampedToRecordedRange() {
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: 1_000_001)
        #expect(histogram.percentile(50) == 1_000_001)
        #expect(histogram.percentile(99.9) == 1_000_001)
    }

    @Test func mergeEqualsRecordingEverythingInOne() {
        var first = LatencyHistogram(), second = LatencyHistogram(), both = LatencyHistogram()
        for value in stride(from: UInt64(10), to: 50_000, by: 37) {
            if value % 2 == 0 { first.record(nanoseconds: value) } else { second.record(nanoseconds: value) }
            both.record(nanoseconds: value)
        }
        first.merge(second)
        #expect(first == both)
    }

    @Test func serializedFormRebuildsTheSameHistogram() {
        var histogram = LatencyHistogram()
        for value in [3, 700, 70_000, 7_000_000] as [UInt64] { histogram.record(nanoseconds: value) }
        let rebuilt = LatencyHistogram(buckets: histogram.nonEmptyBuckets, sum: histogram.sum,
                                       min: histogram.min, max: histogram.max)
        #expect(rebuilt == histogram)
    }

    @Test func serializedFormWithBucketOutOfRangeIsRejected() {
        #expect(LatencyHistogram(buckets: [(LatencyHistogram.bucketCount, 1)], sum: 1, min: 1, max: 1) == nil)
        #expect(LatencyHistogram(buckets: [(-1, 1)], sum: 1, min: 1, max: 1) == nil)
        #expect(LatencyHistogram(buckets: [(5, 1)], sum: 5, min: 9, max: 5) == nil)
    }
}
