import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import loadtest

/// Collects element names and text, failing on any XML error.
private final class XMLCollector: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var texts: [String] = []
    private var current = ""

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        elements.append(elementName)
        current = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if elementName == "text" { texts.append(current) }
        current = ""
    }
}

private func parse(_ svg: String) -> (isWellFormed: Bool, collector: XMLCollector) {
    let parser = XMLParser(data: Data(svg.utf8))
    let collector = XMLCollector()
    parser.delegate = collector
    return (parser.parse(), collector)
}

private func echoResult() -> RunResult {
    var result = RunResult(scenario: "echo")
    result.durationSeconds = 2
    result.parameters = ["url": "ws://127.0.0.1:8080/echo?a=1&b=<2>", "connections": "1"]
    var histogram = LatencyHistogram()
    for value in 1...10_000 as ClosedRange<UInt64> { histogram.record(nanoseconds: 50_000 + value * 30) }
    result.histograms["round_trip"] = histogram
    var timeline = Timeline(origin: 1_000)
    for slot in 0..<20 as Range<UInt64> {
        for _ in 0..<(slot == 7 ? 10 : 500) { timeline.record(at: 1_000 + slot * Timeline.slotNanoseconds + 5) }
    }
    result.timelines["messages"] = timeline
    return result
}

@Suite struct RunPlotTests {
    @Test func plotIsWellFormedXMLWithAxesAndMarkedPercentiles() {
        let (isWellFormed, collector) = parse(RunPlot.svg(for: echoResult()))
        #expect(isWellFormed)
        #expect(collector.elements.first == "svg")
        #expect(collector.elements.contains("polyline"))
        let texts = collector.texts
        for label in ["Latency distribution", "p50", "p99", "99%", "round_trip", "per second", "mean 4.8k/s"] {
            #expect(texts.contains { $0.contains(label) }, "missing label \(label)")
        }
        #expect(texts.contains { $0.contains("Throughput over time: messages per second") })
        // The parameters' markup characters came back as text, not as markup.
        #expect(texts.contains { $0.contains("a=1&b=<2>") })
    }

    @Test func emptyRunStillDrawsBothPanels() {
        let (isWellFormed, collector) = parse(RunPlot.svg(for: RunResult(scenario: "durable")))
        #expect(isWellFormed)
        #expect(collector.texts.contains("no latency recorded"))
        #expect(collector.texts.contains("no completions recorded"))
        #expect(!collector.elements.contains("polyline"))
    }

    @Test func escapingCoversEveryMarkupCharacter() {
        #expect(SVGDocument.escaped("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;")
    }

    @Test func timelinesCountPerSlotAndMergeSlotBySlot() {
        var first = Timeline(origin: 100)
        first.record(at: 50)
        first.record(at: 100)
        first.record(at: 100 + 2 * Timeline.slotNanoseconds)
        #expect(first.counts == [1, 0, 1])
        var second = Timeline(origin: 0)
        second.record(at: 5 * Timeline.slotNanoseconds)
        first.merge(second)
        #expect(first.counts == [1, 0, 1, 0, 0, 1])
        #expect(first.total == 3)
    }

    @Test func timelinesSurviveTheJSONRoundTrip() throws {
        let result = echoResult()
        let decoded = try RunResult(json: result.json)
        #expect(decoded.timelines["messages"]?.counts == result.timelines["messages"]?.counts)
    }
}
