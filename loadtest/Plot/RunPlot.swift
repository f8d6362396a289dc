// `--plot FILE.svg`: one run as a picture. Top: the latency distribution as percentile curves
// (x: 0 … 99.99 % on the usual "nines" log scale, y: milliseconds on a log scale), p50 and p99
// marked. Bottom: completions per second over the measured phase (100 ms slots), with the mean.
// Pure: a RunResult in, SVG text out, so it is tested without a server.
import Foundation

enum RunPlot {
    /// The histogram and timeline each scenario is about; other histograms are drawn after it.
    static func primaryNames(for scenario: String) -> (histogram: String, timeline: String) {
        switch scenario {
        case "echo": ("round_trip", "messages")
        case "feed": ("delivery", "deliveries")
        case "durable": ("acknowledgement", "acknowledged_publishes")
        case "race": ("accept", "accept_replies")
        case "errand": ("errand", "errands_finished")
        case "connections": ("connect", "connections_opened")
        default: ("", "")
        }
    }

    static let colors = ["#1f5fbf", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#0b7285", "#5c940d", "#495057"]
    static let maximumSeries = 8

    static func svg(for result: RunResult) -> String {
        let names = primaryNames(for: result.scenario)
        // Connect times are set-up, not the run, unless the run is about connecting.
        let series = result.histograms.filter { $0.value.count > 0 && ($0.key != "connect" || $0.key == names.histogram) }
            .sorted { ($0.key == names.histogram ? 0 : 1, $1.value.count, $0.key) < ($1.key == names.histogram ? 0 : 1, $0.value.count, $1.key) }
            .prefix(maximumSeries).map { (name: $0.key, histogram: $0.value) }
        let timelineName = result.timelines[names.timeline] != nil ? names.timeline : (result.timelines.keys.sorted().first ?? "")
        return svg(title: "loadtest \(result.scenario)", subtitle: subtitle(of: result), latencies: Array(series),
                   timelineName: timelineName, timeline: result.timelines[timelineName],
                   durationSeconds: result.durationSeconds)
    }

    static func subtitle(of result: RunResult) -> String {
        let shown = result.parameters.keys.sorted().filter { $0 != "url" }.map { "\($0)=\(result.parameters[$0] ?? "")" }
        return ([result.parameters["url"]].compactMap { $0 } + shown).joined(separator: "  ")
    }

    static func svg(title: String, subtitle: String, latencies: [(name: String, histogram: LatencyHistogram)],
                    timelineName: String, timeline: Timeline?, durationSeconds: Double) -> String {
        var document = SVGDocument(width: 1000, height: 700)
        document.text(title, 24, 30, size: 18, isBold: true)
        document.text(subtitle, 24, 52, size: 11, color: "#555")
        drawLatency(latencies, into: &document, frame: Frame(left: 80, top: 95, right: 700, bottom: 375))
        drawTimeline(timelineName, timeline, durationSeconds: durationSeconds, into: &document,
                     frame: Frame(left: 80, top: 450, right: 960, bottom: 650))
        return document.rendered
    }

    struct Frame {
        var left, top, right, bottom: Double
        var width: Double { right - left }
        var height: Double { bottom - top }
    }

    // MARK: Latency

    /// x in "nines": log10(1 / (1 - q)); 0 is the minimum, 2 is p99, 4 is p99.99.
    static func nines(ofPercent percent: Double) -> Double { -log10(1 - percent / 100) }

    static func milliseconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }

    static func formatMilliseconds(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f ms", value) }
        if value >= 10 { return String(format: "%.1f ms", value) }
        if value >= 0.1 { return String(format: "%.2f ms", value) }
        return String(format: "%.0f µs", value * 1000)
    }

    static func drawLatency(_ series: [(name: String, histogram: LatencyHistogram)], into document: inout SVGDocument, frame: Frame) {
        document.text("Latency distribution", frame.left, frame.top - 12, size: 14, isBold: true)
        document.rectangle(frame.left, frame.top, frame.width, frame.height, fill: "none", stroke: "#bbb")
        guard !series.isEmpty else {
            document.text("no latency recorded", (frame.left + frame.right) / 2, (frame.top + frame.bottom) / 2,
                          size: 14, anchor: .middle, color: "#888")
            return
        }
        let largestCount = series.map(\.histogram.count).max() ?? 1
        let maximumNines = Swift.min(5, Swift.max(2, (log10(Double(largestCount))).rounded(.down)))
        let low = series.map { milliseconds($0.histogram.min) }.min() ?? 0.001
        let high = series.map { milliseconds($0.histogram.max) }.max() ?? 1
        var lowDecade = log10(Swift.max(low, 1e-4)).rounded(.down)
        var highDecade = log10(Swift.max(high, 1e-4)).rounded(.up)
        if highDecade <= lowDecade { highDecade = lowDecade + 1 }
        if highDecade - lowDecade < 1 { lowDecade -= 1 }
        func x(_ nines: Double) -> Double { frame.left + nines / maximumNines * frame.width }
        func y(_ milliseconds: Double) -> Double {
            let position = (log10(Swift.max(milliseconds, 1e-4)) - lowDecade) / (highDecade - lowDecade)
            return frame.bottom - position * frame.height
        }
        for decade in Int(lowDecade)...Int(highDecade) {
            for step in [1.0, 2, 5] {
                let value = step * pow(10, Double(decade))
                guard value >= pow(10, lowDecade) * 0.999, value <= pow(10, highDecade) * 1.001 else { continue }
                document.line(frame.left, y(value), frame.right, y(value), color: step == 1 ? "#ddd" : "#f0f0f0")
                document.text(formatMilliseconds(value), frame.left - 6, y(value) + 4, size: 11, anchor: .end, color: "#555")
            }
        }
        let percentLabels = ["0", "90", "99", "99.9", "99.99", "99.999"]
        for nines in 0...Int(maximumNines) {
            document.line(x(Double(nines)), frame.top, x(Double(nines)), frame.bottom, color: "#eee")
            document.text(percentLabels[nines] + "%", x(Double(nines)), frame.bottom + 16, size: 11, anchor: .middle, color: "#555")
        }
        document.text("percentile (log scale of 1/(1−p))", (frame.left + frame.right) / 2, frame.bottom + 34, size: 12, anchor: .middle)
        document.text("latency (log scale)", frame.left - 62, (frame.top + frame.bottom) / 2, size: 12, anchor: .middle, rotated: true)
        for (label, percent) in [("p50", 50.0), ("p99", 99.0)] {
            document.line(x(nines(ofPercent: percent)), frame.top, x(nines(ofPercent: percent)), frame.bottom, color: "#999", dashed: true)
            document.text(label, x(nines(ofPercent: percent)) + 3, frame.top + 13, size: 11, color: "#666")
        }
        let steps = 240
        var legendY = frame.top + 8
        for (index, entry) in series.enumerated() {
            let color = colors[index % colors.count]
            let histogram = entry.histogram
            let points = (0...steps).map { step -> (x: Double, y: Double) in
                let atNines = Double(step) / Double(steps) * maximumNines
                let percent = Swift.min(100, (1 - pow(10, -atNines)) * 100)
                return (x(atNines), y(milliseconds(histogram.percentile(percent) ?? 0)))
            }
            document.polyline(points, color: color, width: index == 0 ? 2.5 : 1.5)
            let p50 = milliseconds(histogram.percentile(50) ?? 0), p99 = milliseconds(histogram.percentile(99) ?? 0)
            document.circle(x(nines(ofPercent: 50)), y(p50), radius: 3.5, color: color)
            document.circle(x(nines(ofPercent: 99)), y(p99), radius: 3.5, color: color)
            if index == 0 {
                document.text(formatMilliseconds(p50), x(nines(ofPercent: 50)) + 6, y(p50) - 6, size: 11, color: color, isBold: true)
                document.text(formatMilliseconds(p99), x(nines(ofPercent: 99)) + 6, y(p99) - 6, size: 11, color: color, isBold: true)
            }
            let legendX = frame.right + 20
            document.rectangle(legendX, legendY, 12, 12, fill: color)
            document.text(entry.name, legendX + 18, legendY + 10, size: 12, isBold: index == 0)
            document.text("n=\(histogram.count)  p50 \(formatMilliseconds(p50))  p99 \(formatMilliseconds(p99))",
                          legendX + 18, legendY + 25, size: 10, color: "#555")
            document.text("max \(formatMilliseconds(milliseconds(histogram.max)))", legendX + 18, legendY + 38, size: 10, color: "#555")
            legendY += 44
        }
    }

    // MARK: Throughput

    static func formatRate(_ value: Double) -> String {
        if value >= 1e6 { return String(format: "%.2fM", value / 1e6) }
        if value >= 1e4 { return String(format: "%.0fk", value / 1e3) }
        if value >= 1e3 { return String(format: "%.1fk", value / 1e3) }
        return String(format: "%.0f", value)
    }

    /// A round axis maximum: 1, 2 or 5 × 10^k at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let decade = pow(10, log10(value).rounded(.down))
        for step in [1.0, 2, 2.5, 5, 10] where step * decade >= value { return step * decade }
        return 10 * decade
    }

    static func drawTimeline(_ name: String, _ timeline: Timeline?, durationSeconds: Double, into document: inout SVGDocument, frame: Frame) {
        document.text("Throughput over time" + (name.isEmpty ? "" : ": \(name) per second"), frame.left, frame.top - 12, size: 14, isBold: true)
        document.rectangle(frame.left, frame.top, frame.width, frame.height, fill: "none", stroke: "#bbb")
        let slotSeconds = Double(Timeline.slotNanoseconds) / 1e9
        // Whole slots only: a last partial slot would read as a collapse at the end.
        let slotsInRun = durationSeconds > 0 ? Swift.max(1, Int((durationSeconds / slotSeconds).rounded(.down))) : (timeline?.counts.count ?? 0)
        let counts = Array((timeline?.counts ?? []).prefix(slotsInRun))
        guard counts.contains(where: { $0 > 0 }) else {
            document.text("no completions recorded", (frame.left + frame.right) / 2, (frame.top + frame.bottom) / 2,
                          size: 14, anchor: .middle, color: "#888")
            return
        }
        let rates = counts.map { Double($0) / slotSeconds }
        let top = niceCeiling((rates.max() ?? 1) * 1.05)
        let span = Swift.max(Double(counts.count) * slotSeconds, slotSeconds)
        func x(_ seconds: Double) -> Double { frame.left + seconds / span * frame.width }
        func y(_ rate: Double) -> Double { frame.bottom - rate / top * frame.height }
        for tick in 0...4 {
            let value = top * Double(tick) / 4
            document.line(frame.left, y(value), frame.right, y(value), color: "#eee")
            document.text(formatRate(value), frame.left - 6, y(value) + 4, size: 11, anchor: .end, color: "#555")
        }
        let secondStep = niceCeiling(span / 10)
        var second = 0.0
        while second <= span + 1e-9 {
            document.text(SVGDocument.number(second), x(second), frame.bottom + 16, size: 11, anchor: .middle, color: "#555")
            second += secondStep
        }
        document.text("seconds since the measured phase began (100 ms slots)", (frame.left + frame.right) / 2,
                      frame.bottom + 34, size: 12, anchor: .middle)
        document.text("per second", frame.left - 62, (frame.top + frame.bottom) / 2, size: 12, anchor: .middle, rotated: true)
        var points: [(x: Double, y: Double)] = []
        for (slot, rate) in rates.enumerated() {
            points.append((x(Double(slot) * slotSeconds), y(rate)))
            points.append((x(Double(slot + 1) * slotSeconds), y(rate)))
        }
        document.polyline(points, color: colors[0], width: 1.5)
        let mean = Double(counts.reduce(0, +)) / span
        document.line(frame.left, y(mean), frame.right, y(mean), color: colors[1], width: 1.5, dashed: true)
        document.text("mean \(formatRate(mean))/s", frame.right - 6, y(mean) - 6, size: 12, anchor: .end, color: colors[1], isBold: true)
    }
}
