// durable: C publishers, each with exactly one `order.publish` in flight, for T seconds.
// Every reply is an acknowledgement the server gives only once the order is durable under its
// configured fsync policy, so acks per second and ack latency measure the journal's group
// commit end to end.
import BangbangProtocol
import SocketServer

final class DurableWorker: ProtocolWorker, @unchecked Sendable {
    private var isPublishing = false
    var acknowledged = 0
    var refused = 0
    var inFlight = 0
    private var acknowledgement = LatencyHistogram()
    private var typeCursor = 0

    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        result.rates = ["acknowledged_publishes"]
        timelineName = "acknowledged_publishes"
        result.checks.insert("refused_publishes")
    }

    func startPublishing() {
        isPublishing = true
        for client in openClients(.publisher) { publish(client) }
    }

    func stopPublishing() { isPublishing = false }

    private func publish(_ client: WebSocketClient) {
        let types = options.types.isEmpty ? ["express"] : options.types
        let type = types[typeCursor % types.count]
        let campuses = options.campuses.isEmpty ? ["North"] : options.campuses
        let campus = campuses[typeCursor % campuses.count]
        typeCursor &+= 1
        let sentAt = MonotonicClock.nanoseconds()
        inFlight += 1
        request(client, "order.publish", OrderDrafts.draft(type: type, text: "durable", campus: campus)) { reply in
            self.inFlight -= 1
            guard self.isPublishing else { return }
            if reply.isSuccess {
                self.acknowledged += 1
                self.timeline.record(at: reply.receivedAt)
                self.acknowledgement.record(nanoseconds: reply.receivedAt &- sentAt)
            } else {
                self.refused += 1
                self.recordFailure(describe(reply, "order.publish"))
            }
            if client.isOpen { self.publish(client) }
        }
    }

    override func finalResult() -> RunResult {
        var part = super.finalResult()
        part.add(Int64(acknowledged), to: "acknowledged_publishes")
        part.add(Int64(refused), to: "refused_publishes")
        part.histograms["acknowledgement"] = acknowledgement
        return part
    }
}

enum DurableScenario {
    static func run(_ options: Options, settings: ClientSettings) throws(SetupFailure) -> RunResult {
        let publishers = options.share(of: options.effectivePublishers)
        let harness = Harness<DurableWorker>(options: options, settings: settings) {
            DurableWorker(loop: $0, index: $1, workerCount: $2, options: $3, settings: $4)
        }
        try ProtocolSetup.prepare(harness, runners: 0, publishers: publishers)
        harness.synchronizeWithParent()
        harness.markMeasurementStart()
        let start = MonotonicClock.nanoseconds()
        harness.startOnEach { $0.startPublishing() }
        var previous = 0
        var previousTime = start
        harness.hold(seconds: options.durationSeconds, phase: "publishing") {
            let acknowledged = harness.total { $0.acknowledged }
            let now = MonotonicClock.nanoseconds()
            defer { previous = acknowledged; previousTime = now }
            let rate = Double(acknowledged - previous) / (Double(now - previousTime) / 1e9)
            return "\(acknowledged) acknowledged, \(Report.format(rate.rounded())) acks/s, \(harness.total { $0.refused }) refused"
        }
        harness.startOnEach { $0.stopPublishing() }
        let duration = Double(MonotonicClock.nanoseconds() - start) / 1e9
        harness.wait(timeoutSeconds: 10, phase: "draining", progress: { "\(harness.total { $0.inFlight }) in flight" }) {
            harness.total { $0.inFlight } == 0
        }
        harness.closeAll()
        var result = harness.gatherResult(durationSeconds: duration)
        result.parameters = [
            "url": options.url.description, "publishers": String(options.effectivePublishers),
            "types": (options.types.isEmpty ? ["express"] : options.types).joined(separator: ","),
            "processes": String(options.processes),
        ]
        return result
    }
}
