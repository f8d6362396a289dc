import BangbangProtocol
import Testing
@testable import loadtest

@Suite struct RunResultTests {
    private func sample(messages: Int64, latencies: [UInt64], duration: Double) -> RunResult {
        var result = RunResult(scenario: "echo")
        result.durationSeconds = duration
        result.add(messages, to: "messages")
        result.rates = ["messages"]
        result.checks = ["unexpected_closes"]
        result.add(0, to: "unexpected_closes")
        var histogram = LatencyHistogram()
        for latency in latencies { histogram.record(nanoseconds: latency) }
        result.histograms["round_trip"] = histogram
        return result
    }

    private func metric(_ result: RunResult, _ name: String) -> Double? {
        result.metrics.first { $0.name == name }?.value
    }

    @Test func mergeAddsCountersAndKeepsLongestDuration() {
        var first = sample(messages: 100, latencies: [1_000_000], duration: 10)
        first.merge(sample(messages: 50, latencies: [3_000_000], duration: 10.5))
        #expect(first.counters["messages"] == 150)
        #expect(first.durationSeconds == 10.5)
        #expect(first.histograms["round_trip"]?.count == 2)
        #expect(metric(first, "round_trip_max_ms") == 3)
        #expect(metric(first, "messages_per_second").map { abs($0 - 150 / 10.5) < 1e-9 } == true)
    }

    @Test func mergeKeepsTheLargerGauge() {
        var first = RunResult(scenario: "connections")
        first.gauges["server_rss_after_kib"] = 10
        var second = RunResult(scenario: "connections")
        second.gauges["server_rss_after_kib"] = 30
        first.merge(second)
        #expect(first.gauges["server_rss_after_kib"] == 30)
    }

    @Test func nonZeroCheckedCounterIsAViolation() {
        var result = sample(messages: 1, latencies: [], duration: 1)
        #expect(result.violations.isEmpty)
        result.add(2, to: "unexpected_closes")
        #expect(result.violations.map(\.name) == ["unexpected_closes"])
        #expect(Report.summary(of: result).contains("FAIL (unexpected_closes = 2)"))
    }

    @Test func checkedCounterThatWasNeverCountedIsNotAViolation() {
        var result = RunResult(scenario: "race")
        result.checks = ["winner_violations"]
        #expect(result.violations.isEmpty)
    }

    @Test func jsonRoundTripPreservesEverythingThatMerges() throws {
        var result = sample(messages: 1234, latencies: [5, 5_000, 5_000_000], duration: 2.5)
        result.gauges["server_rss_after_kib"] = 4096
        result.parameters["url"] = "ws://127.0.0.1:1/echo"
        let bytes = JSONWriter.encode(result.json)
        let decoded = try RunResult(json: JSONParser.parse(bytes))
        #expect(decoded == result)
    }

    @Test func metricsOfAFileAreReadBack() throws {
        let result = sample(messages: 10, latencies: [2_000_000], duration: 2)
        let metrics = try RunResult.metrics(inJSON: JSONParser.parse(JSONWriter.encode(result.json)))
        #expect(metrics["messages_per_second"] == 5)
        #expect(metrics["round_trip_p50_ms"].map { abs($0 - 2) < 0.02 } == true)
    }

    @Test func fileWithoutMetricsIsRejected() throws {
        #expect(throws: RunResultDecodingError.self) { try RunResult.metrics(inJSON: JSONParser.parse("{\"scenario\":\"echo\"}")) }
        #expect(throws: RunResultDecodingError.self) { try RunResult(json: JSONParser.parse("{\"counters\":{}}")) }
        #expect(throws: RunResultDecodingError.self) {
            try RunResult(json: JSONParser.parse("{\"scenario\":\"echo\",\"counters\":{\"messages\":1.5}}"))
        }
    }

    @Test func comparisonShowsRatioOfSecondToFirst() {
        let text = Report.comparison(["messages_per_second": 100_000, "only_a": 1],
                                     ["messages_per_second": 150_000, "only_b": 2],
                                     firstName: "a.json", secondName: "b.json")
        let line = text.split(separator: "\n").first { $0.hasPrefix("messages_per_second") }
        #expect(line?.hasSuffix("1.500") == true)
        #expect(text.split(separator: "\n").first { $0.hasPrefix("only_a") }?.hasSuffix("-") == true)
        #expect(text.split(separator: "\n").first { $0.hasPrefix("only_b") }?.hasSuffix("-") == true)
    }

    @Test func comparisonWithZeroBaselineHasNoRatio() {
        let text = Report.comparison(["failures": 0], ["failures": 3], firstName: "a", secondName: "b")
        #expect(text.split(separator: "\n").last?.hasSuffix("-") == true)
    }
}
