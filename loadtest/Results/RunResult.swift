// The outcome of one run, in a form that merges (several loops, several processes) and
// survives a round trip through `--json` so two runs can be compared later.
//
// Raw material is kept, derived figures are computed: counters add up across processes,
// histograms merge bucket by bucket, and only then are rates and percentiles worked out. A
// percentile of percentiles would be wrong; a merged histogram is not.
import BangbangProtocol

struct RunResult: Equatable, Sendable {
    var scenario: String
    /// The settings the run used, for the reader of a JSON file months later.
    var parameters: [String: String] = [:]
    /// Length of the measured phase.
    var durationSeconds: Double = 0
    /// Additive counts (messages, failures, CPU microseconds, …).
    var counters: [String: Int64] = [:]
    /// Non-additive readings (server RSS); merging keeps the larger.
    var gauges: [String: Double] = [:]
    var histograms: [String: LatencyHistogram] = [:]
    /// Completions over time (what `--plot` draws as throughput).
    var timelines: [String: Timeline] = [:]
    /// Counters that are also reported per second of `durationSeconds`.
    var rates: Set<String> = []
    /// Counters that must be zero for the run to pass (violations, missing events).
    var checks: Set<String> = []

    init(scenario: String) {
        self.scenario = scenario
    }

    mutating func add(_ amount: Int64, to counter: String) {
        counters[counter, default: 0] += amount
    }

    /// Folds another part of the same run (another loop or process) into this one.
    mutating func merge(_ other: RunResult) {
        precondition(other.scenario == scenario, "only parts of one run merge")
        durationSeconds = max(durationSeconds, other.durationSeconds)
        parameters.merge(other.parameters) { mine, _ in mine }
        for (name, value) in other.counters { counters[name, default: 0] += value }
        for (name, value) in other.gauges { gauges[name] = max(gauges[name] ?? value, value) }
        for (name, histogram) in other.histograms { histograms[name, default: LatencyHistogram()].merge(histogram) }
        for (name, timeline) in other.timelines { timelines[name, default: Timeline(origin: timeline.origin)].merge(timeline) }
        rates.formUnion(other.rates)
        checks.formUnion(other.checks)
    }

    /// Checked counters that are not zero: the run failed.
    var violations: [(name: String, value: Int64)] {
        checks.sorted().compactMap { name in
            let value = counters[name] ?? 0
            return value == 0 ? nil : (name, value)
        }
    }

    static let percentiles: [(label: String, percent: Double)] = [
        ("p50", 50), ("p90", 90), ("p99", 99), ("p99_9", 99.9), ("max", 100),
    ]

    /// Every figure of the run, flat and in a stable order: what the summary table prints,
    /// what `--json` stores under "metrics" and what `compare` lines up.
    var metrics: [(name: String, value: Double)] {
        var result: [(name: String, value: Double)] = [("duration_seconds", durationSeconds)]
        for name in counters.keys.sorted() where !name.hasPrefix("cpu_") {
            let value = Double(counters[name] ?? 0)
            result.append((name, value))
            if rates.contains(name), durationSeconds > 0 {
                result.append(("\(name)_per_second", value / durationSeconds))
            }
        }
        for name in histograms.keys.sorted() {
            guard let histogram = histograms[name], histogram.count > 0 else { continue }
            for (label, percent) in Self.percentiles {
                result.append(("\(name)_\(label)_ms", Double(histogram.percentile(percent) ?? 0) / 1e6))
            }
            result.append(("\(name)_mean_ms", (histogram.mean ?? 0) / 1e6))
        }
        for name in gauges.keys.sorted() { result.append((name, gauges[name] ?? 0)) }
        let cpuMicroseconds = (counters["cpu_user_microseconds"] ?? 0) + (counters["cpu_system_microseconds"] ?? 0)
        let wallSeconds = gauges["measured_wall_seconds"] ?? durationSeconds
        if wallSeconds > 0, counters["cpu_user_microseconds"] != nil {
            result.append(("driver_cpu_seconds", Double(cpuMicroseconds) / 1e6))
            result.append(("driver_cpu_percent_of_one_core", Double(cpuMicroseconds) / 1e4 / wallSeconds))
        }
        return result
    }
}

// MARK: JSON form

enum RunResultDecodingError: Error, CustomStringConvertible {
    case malformed(String)
    var description: String {
        switch self { case .malformed(let what): "not a loadtest result: \(what)" }
    }
}

extension RunResult {
    var json: JSONValue {
        var histogramObjects: [String: JSONValue] = [:]
        for (name, histogram) in histograms {
            let buckets = histogram.nonEmptyBuckets.map { JSONValue.array([.integer(Int64($0.index)), .integer(Int64($0.count))]) }
            histogramObjects[name] = .object([
                "buckets": .array(buckets),
                "sum": .integer(Int64(truncatingIfNeeded: histogram.sum)),
                "min": .integer(histogram.count == 0 ? 0 : Int64(truncatingIfNeeded: histogram.min)),
                "max": .integer(Int64(truncatingIfNeeded: histogram.max)),
            ])
        }
        var metricObject: [String: JSONValue] = [:]
        for metric in metrics { metricObject[metric.name] = .double(metric.value) }
        return .object([
            "scenario": .string(scenario),
            "parameters": .object(parameters.mapValues { .string($0) }),
            "duration_seconds": .double(durationSeconds),
            "counters": .object(counters.mapValues { .integer($0) }),
            "gauges": .object(gauges.mapValues { .double($0) }),
            "histograms": .object(histogramObjects),
            "timelines": .object(timelines.mapValues { timeline in
                .object(["slot_milliseconds": .integer(Int64(Timeline.slotNanoseconds / 1_000_000)),
                         "counts": .array(timeline.counts.map { .integer($0) })])
            }),
            "rates": .array(rates.sorted().map { .string($0) }),
            "checks": .array(checks.sorted().map { .string($0) }),
            "metrics": .object(metricObject),
        ])
    }

    init(json: JSONValue) throws(RunResultDecodingError) {
        guard case .string(let scenario)? = json["scenario"] else { throw .malformed("no scenario") }
        self.init(scenario: scenario)
        if case .object(let members)? = json["parameters"] {
            for (key, value) in members { if case .string(let text) = value { parameters[key] = text } }
        }
        durationSeconds = json["duration_seconds"].flatMap(Self.number) ?? 0
        if case .object(let members)? = json["counters"] {
            for (key, value) in members {
                guard case .integer(let number) = value else { throw .malformed("counter \(key) is not an integer") }
                counters[key] = number
            }
        }
        if case .object(let members)? = json["gauges"] {
            for (key, value) in members { gauges[key] = Self.number(value) }
        }
        if case .object(let members)? = json["histograms"] {
            for (key, value) in members {
                guard case .array(let pairs)? = value["buckets"],
                      case .integer(let sum)? = value["sum"], case .integer(let min)? = value["min"],
                      case .integer(let max)? = value["max"] else { throw .malformed("histogram \(key)") }
                var buckets: [(index: Int, count: UInt64)] = []
                for pair in pairs {
                    guard case .array(let items) = pair, items.count == 2,
                          case .integer(let index) = items[0], case .integer(let count) = items[1], count >= 0
                    else { throw .malformed("histogram \(key) bucket") }
                    buckets.append((Int(index), UInt64(count)))
                }
                guard let histogram = LatencyHistogram(buckets: buckets, sum: UInt64(truncatingIfNeeded: sum),
                                                       min: UInt64(truncatingIfNeeded: min),
                                                       max: UInt64(truncatingIfNeeded: max))
                else { throw .malformed("histogram \(key) is inconsistent") }
                histograms[key] = histogram
            }
        }
        if case .object(let members)? = json["timelines"] {
            for (key, value) in members {
                guard case .array(let items)? = value["counts"] else { throw .malformed("timeline \(key)") }
                var counts: [Int64] = []
                for item in items {
                    guard case .integer(let count) = item else { throw .malformed("timeline \(key) count") }
                    counts.append(count)
                }
                timelines[key] = Timeline(origin: 0, counts: counts)
            }
        }
        if case .array(let names)? = json["rates"] {
            for case .string(let name) in names { rates.insert(name) }
        }
        if case .array(let names)? = json["checks"] {
            for case .string(let name) in names { checks.insert(name) }
        }
    }

    /// The "metrics" object of a result file: all `compare` needs, and all a file from an
    /// older driver is sure to have.
    static func metrics(inJSON json: JSONValue) throws(RunResultDecodingError) -> [String: Double] {
        guard case .object(let members)? = json["metrics"] else { throw .malformed("no metrics object") }
        var result: [String: Double] = [:]
        for (key, value) in members { if let number = number(value) { result[key] = number } }
        return result
    }

    private static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .integer(let integer): Double(integer)
        case .double(let double): double
        default: nil
        }
    }
}
