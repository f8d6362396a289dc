// errand: a campus day in miniature. Publishers start whole errands at a target rate, round
// robin over the order types: express and purchase (accept → pick up → deliver → confirm),
// bounty (accept → start → deliver → confirm) and group (two users join → the publisher
// completes). Every tenth errand is cancelled by its publisher right after publishing, and in
// every fifth the runner's connection drops after accepting: it reconnects, resumes its
// session with its token and carries on. Reports per-operation latency, whole-errand time and
// errors (any failed step fails its errand).
//
// An errand uses a publisher and runners of one worker, so all of its steps run on one loop;
// a runner works one errand at a time, so a dropped connection interrupts nothing else.
import BangbangProtocol
import Foundation
import SocketServer

final class ErrandWorker: ProtocolWorker, @unchecked Sendable {
    struct Errand {
        var number: Int
        var type: String
        var publisher: Int
        var runners: [Int]
        var orderID: Int64 = 0
        var startedAt: UInt64
    }

    private let types: [String]
    private var clientByTag: [Int: WebSocketClient] = [:]
    private var freeRunners: [Int] = []
    private var publishers: [Int] = []
    private var pendingReconnects: [Int: () -> Void] = [:]
    private var isStarting = false
    private var startTime: UInt64 = 0
    private var ratePerSecond = 0.0
    private var cursor = 0
    var started = 0
    var completed = 0
    var cancelled = 0
    var failed = 0
    var reconnects = 0
    var skipped = 0
    var inFlight = 0
    private var errandTime = LatencyHistogram()

    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        types = options.types.isEmpty ? OrderDrafts.types : options.types
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        result.rates = ["errands_completed", "errands_started"]
        timelineName = "errands_finished"
        result.checks.insert("errands_failed")
    }

    override func didOpen(_ client: WebSocketClient) {
        clientByTag[client.tag] = client
        guard let resume = pendingReconnects.removeValue(forKey: client.tag) else { return }
        logIn(client) { isLoggedIn in
            if isLoggedIn {
                resume()
            } else {
                self.pendingReconnects[client.tag] = nil
                self.failAll(runner: client.tag)
            }
        }
    }

    override func didClose(_ client: WebSocketClient, failure: String?) {
        super.didClose(client, failure: failure)
        if pendingReconnects[client.tag] != nil, !isStopping { connect(tags: [client.tag]) }
    }

    /// Errands waiting on a reconnect that failed.
    private var errandsByRunner: [Int: Errand] = [:]

    private func failAll(runner tag: Int) {
        if let errand = errandsByRunner[tag] { fail(errand, "the runner could not resume its session") }
    }

    func startErrands(rate: Double) {
        publishers = openClients(.publisher).map(\.tag)
        freeRunners = openClients(.runner).map(\.tag)
        guard !publishers.isEmpty, !freeRunners.isEmpty, rate > 0 else { return }
        ratePerSecond = rate
        isStarting = true
        startTime = MonotonicClock.nanoseconds()
        tick()
    }

    func stopStarting() { isStarting = false }

    private func tick() {
        guard isStarting else { return }
        let due = Int(Double(MonotonicClock.nanoseconds() - startTime) / 1e9 * ratePerSecond) - started - skipped
        for _ in 0..<max(0, due) { startErrand() }
        loop.schedule(afterMilliseconds: 5) { [self] in tick() }
    }

    private func startErrand() {
        let type = types[cursor % types.count]
        let runnersNeeded = type == "group" ? 2 : 1
        guard freeRunners.count >= runnersNeeded else {
            skipped += 1
            return
        }
        let runners = Array(freeRunners.suffix(runnersNeeded))
        freeRunners.removeLast(runnersNeeded)
        let errand = Errand(number: cursor, type: type, publisher: publishers[cursor % publishers.count],
                            runners: runners, startedAt: MonotonicClock.nanoseconds())
        cursor += 1
        started += 1
        inFlight += 1
        for runner in runners { errandsByRunner[runner] = errand }
        step(errand, errand.publisher, "order.publish", OrderDrafts.draft(type: type, text: "errand \(errand.number)")) { reply in
            var errand = errand
            guard case .integer(let id)? = reply.data["order"]?["id"] else {
                self.fail(errand, "order.publish replied without an order id")
                return
            }
            errand.orderID = id
            for runner in errand.runners { self.errandsByRunner[runner] = errand }
            if errand.number % 10 == 9 {
                self.step(errand, errand.publisher, "order.cancel", self.orderData(errand)) { _ in
                    self.finish(errand, isCancelled: true)
                }
            } else if errand.type == "group" {
                self.joinGroup(errand)
            } else {
                self.accept(errand)
            }
        }
    }

    private func orderData(_ errand: Errand) -> JSONValue { ["order_id": .integer(errand.orderID)] }

    private func accept(_ errand: Errand) {
        let runner = errand.runners[0]
        step(errand, runner, "order.accept", orderData(errand)) { _ in
            if errand.number % 5 == 2 {
                self.reconnects += 1
                self.reconnect(runner) { self.progress(errand) }
            } else {
                self.progress(errand)
            }
        }
    }

    private func progress(_ errand: Errand) {
        let runner = errand.runners[0]
        let operation = errand.type == "bounty" ? "order.start" : "order.pick_up"
        step(errand, runner, operation, orderData(errand)) { _ in
            self.step(errand, runner, "order.deliver", self.orderData(errand)) { reply in
                if case .string("completed")? = reply.data["order"]?["status"] {
                    self.finish(errand, isCancelled: false)
                    return
                }
                self.step(errand, errand.publisher, "order.confirm", self.orderData(errand)) { _ in
                    self.finish(errand, isCancelled: false)
                }
            }
        }
    }

    private func joinGroup(_ errand: Errand) {
        step(errand, errand.runners[0], "order.join", orderData(errand)) { _ in
            self.step(errand, errand.runners[1], "order.join", self.orderData(errand)) { _ in
                self.step(errand, errand.publisher, "order.complete", self.orderData(errand)) { _ in
                    self.finish(errand, isCancelled: false)
                }
            }
        }
    }

    /// Drops the runner's connection, reconnects it and resumes its session, then `then`.
    private func reconnect(_ tag: Int, then: @escaping () -> Void) {
        guard let client = clientByTag[tag] else { return }
        pendingReconnects[tag] = then
        clientByTag[tag] = nil
        client.abort()
    }

    /// One request of an errand; a failure fails the errand, success continues with `next`.
    private func step(_ errand: Errand, _ tag: Int, _ operation: String, _ data: JSONValue,
                      next: @escaping (Reply) -> Void) {
        guard let client = clientByTag[tag], client.isOpen else {
            fail(errand, "\(operation): the connection of participant \(tag) is closed")
            return
        }
        request(client, operation, data) { reply in
            guard reply.isSuccess else {
                self.fail(errand, describe(reply, operation))
                return
            }
            next(reply)
        }
    }

    private func finish(_ errand: Errand, isCancelled: Bool) {
        if isCancelled { cancelled += 1 } else { completed += 1 }
        let now = MonotonicClock.nanoseconds()
        errandTime.record(nanoseconds: now &- errand.startedAt)
        timeline.record(at: now)
        release(errand)
    }

    private func fail(_ errand: Errand, _ message: String) {
        failed += 1
        recordFailure("errand \(errand.number) (\(errand.type)): \(message)")
        release(errand)
    }

    private func release(_ errand: Errand) {
        inFlight -= 1
        for runner in errand.runners {
            errandsByRunner[runner] = nil
            freeRunners.insert(runner, at: 0)
        }
    }

    override func finalResult() -> RunResult {
        var part = super.finalResult()
        part.add(Int64(started), to: "errands_started")
        part.add(Int64(completed), to: "errands_completed")
        part.add(Int64(cancelled), to: "errands_cancelled")
        part.add(Int64(failed), to: "errands_failed")
        part.add(Int64(reconnects), to: "reconnects")
        part.add(Int64(skipped), to: "errands_skipped_no_free_runner")
        part.histograms["errand"] = errandTime
        return part
    }
}

enum ErrandScenario {
    static func run(_ options: Options, settings: ClientSettings) throws(SetupFailure) -> RunResult {
        let runners = options.share(of: options.runners)
        let publishers = options.share(of: options.effectivePublishers)
        let harness = Harness<ErrandWorker>(options: options, settings: settings) {
            ErrandWorker(loop: $0, index: $1, workerCount: $2, options: $3, settings: $4)
        }
        try ProtocolSetup.prepare(harness, runners: runners, publishers: publishers)
        harness.synchronizeWithParent()
        harness.markMeasurementStart()
        let start = MonotonicClock.nanoseconds()
        ProtocolSetup.startPublishers(harness) { worker, rate in worker.startErrands(rate: rate) }
        harness.hold(seconds: options.durationSeconds, phase: "errands") {
            "\(harness.total { $0.started }) started, \(harness.total { $0.completed }) completed, "
                + "\(harness.total { $0.cancelled }) cancelled, \(harness.total { $0.failed }) failed, "
                + "\(harness.total { $0.inFlight }) in flight"
        }
        harness.startOnEach { $0.stopStarting() }
        let duration = Double(MonotonicClock.nanoseconds() - start) / 1e9
        harness.waitWhileProgressing(stallSeconds: 10, phase: "finishing",
                                     progress: { "\(harness.total { $0.inFlight }) in flight" },
                                     measure: { harness.total { $0.completed + $0.cancelled + $0.failed } },
                                     until: { harness.total { $0.inFlight } == 0 })
        let unfinished = harness.total { $0.inFlight }
        harness.closeAll()
        var result = harness.gatherResult(durationSeconds: duration)
        result.add(Int64(unfinished), to: "errands_unfinished")
        result.checks.insert("errands_unfinished")
        result.parameters = [
            "url": options.url.description, "runners": String(options.runners),
            "publishers": String(options.effectivePublishers), "rate": Report.format(options.rate),
            "types": (options.types.isEmpty ? OrderDrafts.types : options.types).joined(separator: ","),
            "processes": String(options.processes),
        ]
        return result
    }
}
