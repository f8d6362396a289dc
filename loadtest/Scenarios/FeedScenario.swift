// feed: N runners subscribed to the boards of one or more order types, P publishers publishing
// at a total rate R. Reports publish→runner delivery latency, deliveries per second, and every
// missing or duplicated event.
//
// The publisher writes "lt PID NS" (its process and CLOCK_MONOTONIC time, which every process
// on the machine shares) into the order's public text; a runner's latency is its receive time
// minus that. Feed events are read with FeedEventScanner, without a JSON tree. Two independent
// checks find lost or repeated events: the board's `seq` must advance by exactly one per event
// on every runner (gaps and repeats are counted), and every order this process published must
// reach every runner of this process exactly once (counted per order id at the end).
import BangbangProtocol
import Foundation
import SocketServer

final class FeedWorker: ProtocolWorker, @unchecked Sendable {
    private let types: [String]
    private let typeBytes: [[UInt8]]
    private let processID = getpid()
    /// Last board position seen per runner tag, one per type (-1: none yet).
    private var positions: [Int: [Int64]] = [:]
    /// Board positions in the subscribe reply: events at or below them are already in the list.
    private var floors: [Int: [Int64]] = [:]
    private var isMeasuring = false
    var deliveries = 0
    private var delivery = LatencyHistogram()
    var sequenceGaps: Int64 = 0
    var sequenceRepeats = 0
    /// feed.enter count per order id, for the orders this process published.
    var receivedHere: [Int64: Int] = [:]
    var receivedHereTotal = 0

    private var isPublishing = false
    private var publishStart: UInt64 = 0
    private var ratePerSecond = 0.0
    private var publishers: [WebSocketClient] = []
    private var publishCursor = 0
    var publishesSent = 0
    var publishedIDs: [Int64] = []
    var refused = 0
    var publishesInFlight = 0
    /// Publishes still unanswered when the run ended.
    var unacknowledged = 0
    /// Ticks on which every publisher was at the in-flight limit (the server was behind).
    var publishesDeferred = 0

    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        types = options.types.isEmpty ? ["express"] : options.types
        typeBytes = types.map { Array($0.utf8) }
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        result.rates = ["deliveries", "publishes"]
        timelineName = "deliveries"
        result.checks.formUnion(["missing_deliveries", "duplicate_deliveries", "feed_sequence_gaps",
                                 "feed_sequence_repeats", "refused_publishes",
                                 "unacknowledged_publishes"])
    }

    /// A runner connects to the next of `--runner-url` when given; everyone else to `--url`.
    override func makeClient(tag: Int) -> WebSocketClient {
        guard !options.runnerURLs.isEmpty, participants[tag]?.role == .runner else { return super.makeClient(tag: tag) }
        var runnerSettings = settings
        runnerSettings.url = options.runnerURLs[tag % options.runnerURLs.count]
        return WebSocketClient(tag: tag, loop: loop, settings: runnerSettings, delegate: self)
    }

    func subscribeAll() {
        let subscription: JSONValue = ["types": .array(types.map { .string($0) })]
        runPhase(openClients(.runner)) { client, done in
            // Events may overtake the reply (the server watches before it lists): track them from now.
            self.positions[client.tag] = Array(repeating: -1, count: self.types.count)
            self.request(client, "board.subscribe", subscription) { reply in
                guard reply.isSuccess else {
                    self.recordFailure(describe(reply, "board.subscribe"))
                    done(false)
                    return
                }
                var known = self.positions[client.tag] ?? Array(repeating: -1, count: self.types.count)
                var floor = Array(repeating: Int64(-1), count: self.types.count)
                for (index, type) in self.types.enumerated() {
                    guard case .integer(let sequence)? = reply.data["seq"]?[type] else { continue }
                    floor[index] = sequence
                    known[index] = max(known[index], sequence)
                }
                self.positions[client.tag] = known
                self.floors[client.tag] = floor
                done(true)
            }
        }
    }

    override func beginMeasurement() {
        super.beginMeasurement()
        isMeasuring = true
    }

    /// Publishes at `rate` per second in total over this worker's publishers until stopped.
    func startPublishing(rate: Double) {
        publishers = openClients(.publisher)
        guard !publishers.isEmpty else { return }
        ratePerSecond = rate
        isPublishing = true
        publishStart = MonotonicClock.nanoseconds()
        tick()
    }

    func stopPublishing() { isPublishing = false }

    private func tick() {
        guard isPublishing else { return }
        let elapsed = Double(MonotonicClock.nanoseconds() - publishStart) / 1e9
        let due = Int(elapsed * ratePerSecond) - publishesSent
        var remaining = max(0, due)
        while remaining > 0 {
            guard publishOne() else {
                // Every publisher is at the server's in-flight limit: catch up on a later tick.
                publishesDeferred += 1
                break
            }
            remaining -= 1
        }
        loop.schedule(afterMilliseconds: 2) { [self] in tick() }
    }

    /// Publishes one order from the next publisher below the in-flight limit; false if none is.
    private func publishOne() -> Bool {
        var candidate: WebSocketClient?
        for _ in 0..<publishers.count {
            let client = publishers[publishCursor % publishers.count]
            publishCursor &+= 1
            if pendingCount(client) < Self.maxRequestsInFlight {
                candidate = client
                break
            }
        }
        guard let client = candidate else { return false }
        let type = types[publishesSent % types.count]
        publishesSent += 1
        publishesInFlight += 1
        let text = FeedEventScanner.stamp(process: processID, nanoseconds: MonotonicClock.nanoseconds())
        request(client, "order.publish", OrderDrafts.draft(type: type, text: text)) { reply in
            self.publishesInFlight -= 1
            if reply.isSuccess, case .integer(let id)? = reply.data["order"]?["id"] {
                self.publishedIDs.append(id)
            } else if reply.errorCode == "connection_lost", self.isStopping {
                self.unacknowledged += 1
            } else {
                self.refused += 1
                self.recordFailure(describe(reply, "order.publish"))
            }
        }
        return true
    }

    override func didReceive(_ client: WebSocketClient, message: UnsafeRawBufferPointer) {
        guard let event = FeedEventScanner.scan(message, types: typeBytes) else {
            super.didReceive(client, message: message)
            return
        }
        let now = MonotonicClock.nanoseconds()
        if let typeIndex = event.typeIndex, positions[client.tag] != nil {
            if let floor = floors[client.tag]?[typeIndex], event.sequence <= floor { return }
            let last = positions[client.tag]![typeIndex]
            if last >= 0, event.sequence <= last {
                sequenceRepeats += 1
            } else {
                if last >= 0, event.sequence > last + 1 { sequenceGaps += event.sequence - last - 1 }
                positions[client.tag]![typeIndex] = event.sequence
            }
        }
        guard event.kind == .enter, isMeasuring else { return }
        deliveries += 1
        timeline.record(at: now)
        if let publishedAt = event.publishedAt, publishedAt <= now {
            delivery.record(nanoseconds: now - publishedAt)
        }
        if event.publisherProcess == processID {
            receivedHere[event.orderID, default: 0] += 1
            receivedHereTotal += 1
        }
    }

    override func finalResult() -> RunResult {
        var part = super.finalResult()
        part.add(Int64(deliveries), to: "deliveries")
        part.add(Int64(publishedIDs.count), to: "publishes")
        part.add(Int64(refused), to: "refused_publishes")
        part.add(Int64(unacknowledged), to: "unacknowledged_publishes")
        part.add(Int64(publishesDeferred), to: "publish_ticks_deferred")
        part.add(sequenceGaps, to: "feed_sequence_gaps")
        part.add(Int64(sequenceRepeats), to: "feed_sequence_repeats")
        part.histograms["delivery"] = delivery
        return part
    }
}

enum FeedScenario {
    static func run(_ options: Options, settings: ClientSettings) throws(SetupFailure) -> RunResult {
        let runners = options.share(of: options.runners)
        let publishers = options.share(of: options.effectivePublishers)
        let harness = Harness<FeedWorker>(options: options, settings: settings) {
            FeedWorker(loop: $0, index: $1, workerCount: $2, options: $3, settings: $4)
        }
        try ProtocolSetup.prepare(harness, runners: runners, publishers: publishers)
        harness.startOnEach { $0.subscribeAll() }
        harness.wait(timeoutSeconds: max(60, Double(runners) / 100), phase: "subscribing",
                     progress: { "\(harness.total { $0.phaseSucceeded })/\(runners) subscribed" },
                     until: { harness.total { $0.phaseRemaining } == 0 })
        let refused = harness.total { $0.phaseFailed }
        if refused > 0 { throw SetupFailure(description: "\(refused) subscriptions failed" + ProtocolSetup.firstFailure(harness)) }
        harness.synchronizeWithParent()

        harness.markMeasurementStart()
        let start = MonotonicClock.nanoseconds()
        ProtocolSetup.startPublishers(harness) { worker, rate in worker.startPublishing(rate: rate) }
        var previous = 0
        var previousTime = start
        harness.hold(seconds: options.durationSeconds, phase: "feed") {
            let deliveries = harness.total { $0.deliveries }
            let now = MonotonicClock.nanoseconds()
            defer { previous = deliveries; previousTime = now }
            let rate = Double(deliveries - previous) / (Double(now - previousTime) / 1e9)
            return "\(harness.total { $0.publishedIDs.count }) published, \(deliveries) delivered, "
                + "\(Report.format(rate.rounded())) deliveries/s, \(harness.total { $0.liveClients }) open"
        }
        harness.startOnEach { $0.stopPublishing() }
        let duration = Double(MonotonicClock.nanoseconds() - start) / 1e9
        // Wait for the orders in flight, then for every runner here to have every order from here,
        // for as long as deliveries keep coming.
        harness.waitWhileProgressing(stallSeconds: 10, phase: "draining", progress: {
            "\(harness.total { $0.publishesInFlight }) publishes unanswered, "
                + "\(harness.total { $0.receivedHereTotal })/\(harness.total { $0.publishedIDs.count } * runners) delivered"
        }, measure: {
            harness.total { $0.receivedHereTotal } + harness.total { $0.publishedIDs.count }
        }, until: {
            harness.total { $0.publishesInFlight } == 0
                && harness.total { $0.receivedHereTotal } >= harness.total { $0.publishedIDs.count } * runners
        })
        // Other processes' orders, and any duplicates, get a moment longer.
        if options.processCount > 1 { usleep(1_000_000) }
        let published = harness.onEach { $0.publishedIDs }.flatMap { $0 }
        var received: [Int64: Int] = [:]
        for part in harness.onEach({ $0.receivedHere }) { received.merge(part, uniquingKeysWith: +) }
        var missing: Int64 = 0
        var duplicates: Int64 = 0
        for id in published {
            let count = received[id] ?? 0
            if count < runners { missing += Int64(runners - count) }
            if count > runners { duplicates += Int64(count - runners) }
        }
        harness.closeAll()
        var result = harness.gatherResult(durationSeconds: duration)
        result.add(missing, to: "missing_deliveries")
        result.add(duplicates, to: "duplicate_deliveries")
        result.parameters = [
            "url": options.url.description, "runners": String(options.runners),
            "runner_urls": options.runnerURLs.map(\.description).joined(separator: ","),
            "publishers": String(options.effectivePublishers), "rate": Report.format(options.rate),
            "types": (options.types.isEmpty ? ["express"] : options.types).joined(separator: ","),
            "processes": String(options.processes),
        ]
        return result
    }
}
