// Human-readable output: the summary table at the end of a run and the side-by-side table of
// `compare`. Pure functions from results to text, so they can be tested without a server.
import Foundation

enum Report {
    /// Formats a figure so that rates, milliseconds and counts all read naturally.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "-" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        if abs(value) >= 1000 { return String(format: "%.0f", value) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        if abs(value) >= 0.01 { return String(format: "%.3f", value) }
        return String(format: "%.4g", value)
    }

    static func summary(of result: RunResult) -> String {
        var lines = ["", "== \(result.scenario) =="]
        for key in result.parameters.keys.sorted() {
            lines.append("  \(key) = \(result.parameters[key] ?? "")")
        }
        let metrics = result.metrics
        let width = metrics.map(\.name.count).max() ?? 0
        for metric in metrics {
            lines.append(metric.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + format(metric.value))
        }
        let violations = result.violations
        if violations.isEmpty {
            lines.append(result.checks.isEmpty ? "result: completed" : "result: PASS (\(result.checks.sorted().joined(separator: ", ")) all zero)")
        } else {
            lines.append("result: FAIL (" + violations.map { "\($0.name) = \($0.value)" }.joined(separator: ", ") + ")")
        }
        return lines.joined(separator: "\n")
    }

    /// Every metric of either run, with both values and the ratio B/A ("-" where undefined).
    static func comparison(_ first: [String: Double], _ second: [String: Double],
                           firstName: String, secondName: String) -> String {
        let names = Set(first.keys).union(second.keys).sorted()
        let width = max(6, names.map(\.count).max() ?? 0)
        func cell(_ text: String, _ size: Int) -> String {
            text.count >= size ? text : String(repeating: " ", count: size - text.count) + text
        }
        var lines = ["A = \(firstName)", "B = \(secondName)",
                     "metric".padding(toLength: width + 2, withPad: " ", startingAt: 0)
                         + cell("A", 14) + cell("B", 14) + cell("B/A", 10)]
        for name in names {
            let a = first[name], b = second[name]
            let ratio: String
            if let a, let b, a != 0 { ratio = String(format: "%.3f", b / a) } else { ratio = "-" }
            lines.append(name.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                         + cell(a.map(format) ?? "-", 14) + cell(b.map(format) ?? "-", 14) + cell(ratio, 10))
        }
        return lines.joined(separator: "\n")
    }
}
