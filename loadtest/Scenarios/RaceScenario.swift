// race: K runners try to accept each of M orders at the same moment. Exactly one may win each
// order; everyone else must be told `order_taken`. Reports violations and accept latency.
//
// For each order the publisher publishes, then every loop sends all of its runners' accepts
// in one tight pass (one loop turn per loop), so the requests reach the server together; the
// order is scored once every reply is in.
import BangbangProtocol
import Foundation
import SocketServer

final class RaceWorker: ProtocolWorker, @unchecked Sendable {
    var lastPublishedID: Int64?
    var publishFailures = 0
    /// Replies to the current round's accepts.
    var replies = 0
    var wins: [Int64: Int] = [:]
    var wrongWinner = 0
    var unexpectedErrors = 0
    private var accept = LatencyHistogram()

    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        timelineName = "accept_replies"
        result.checks.formUnion(["winner_violations", "wrong_winner", "unexpected_accept_errors", "refused_publishes"])
    }

    func publish() {
        lastPublishedID = nil
        guard let publisher = openClients(.publisher).first else { return }
        let types = options.types.isEmpty ? ["express"] : options.types
        let type = types[wins.count % types.count]
        request(publisher, "order.publish", OrderDrafts.draft(type: type, text: "race")) { reply in
            if reply.isSuccess, case .integer(let id)? = reply.data["order"]?["id"] {
                self.lastPublishedID = id
            } else {
                self.publishFailures += 1
                self.lastPublishedID = -1
                self.recordFailure(describe(reply, "order.publish"))
            }
        }
    }

    func race(for orderID: Int64) {
        replies = 0
        let data: JSONValue = ["order_id": .integer(orderID)]
        for client in openClients(.runner) {
            let sentAt = MonotonicClock.nanoseconds()
            request(client, "order.accept", data) { reply in
                self.replies += 1
                self.accept.record(nanoseconds: reply.receivedAt &- sentAt)
                self.timeline.record(at: reply.receivedAt)
                if reply.isSuccess {
                    self.wins[orderID, default: 0] += 1
                    let runner = reply.data["order"]?["runner"]
                    if runner != .integer(self.participants[client.tag]?.userID ?? -1) { self.wrongWinner += 1 }
                } else if reply.errorCode != "order_taken" {
                    self.unexpectedErrors += 1
                    self.recordFailure(describe(reply, "order.accept"))
                }
            }
        }
    }

    override func finalResult() -> RunResult {
        var part = super.finalResult()
        part.histograms["accept"] = accept
        part.add(Int64(wrongWinner), to: "wrong_winner")
        part.add(Int64(unexpectedErrors), to: "unexpected_accept_errors")
        part.add(Int64(publishFailures), to: "refused_publishes")
        return part
    }
}

enum RaceScenario {
    static func run(_ options: Options, settings: ClientSettings) throws(SetupFailure) -> RunResult {
        guard options.processCount == 1, options.processes == 1 else {
            throw SetupFailure(description: "race runs in one process (one process holds up to ~19,000 runners)")
        }
        let runners = options.runners
        let harness = Harness<RaceWorker>(options: options, settings: settings) {
            RaceWorker(loop: $0, index: $1, workerCount: $2, options: $3, settings: $4)
        }
        try ProtocolSetup.prepare(harness, runners: runners, publishers: 1)
        harness.markMeasurementStart()
        let publisherWorker = harness.workers[runners % harness.workers.count]
        let start = MonotonicClock.nanoseconds()
        var violations: Int64 = 0
        for round in 0..<options.orders {
            publisherWorker.loop.execute { WorkerBox(publisherWorker).worker.publish() }
            harness.wait(timeoutSeconds: 10, phase: "race \(round + 1)/\(options.orders)", progress: { "publishing" }) {
                publisherWorker.loop.queue.sync { publisherWorker.lastPublishedID != nil }
            }
            guard let orderID = publisherWorker.loop.queue.sync(execute: { publisherWorker.lastPublishedID }), orderID > 0 else {
                throw SetupFailure(description: "the race order could not be published" + ProtocolSetup.firstFailure(harness))
            }
            harness.startOnEach { $0.race(for: orderID) }
            let finished = harness.wait(timeoutSeconds: 30, phase: "race \(round + 1)/\(options.orders)",
                                        progress: { "\(harness.total { $0.replies })/\(runners) replies" },
                                        until: { harness.total { $0.replies } >= runners })
            let winners = harness.total { $0.wins[orderID] ?? 0 }
            if !finished || winners != 1 {
                violations += 1
                FileHandle.standardErrorWrite("loadtest: order \(orderID): \(winners) winners\(finished ? "" : ", replies missing")")
            }
        }
        let duration = Double(MonotonicClock.nanoseconds() - start) / 1e9
        harness.closeAll()
        var result = harness.gatherResult(durationSeconds: duration)
        result.add(violations, to: "winner_violations")
        result.add(Int64(options.orders), to: "orders")
        result.parameters = [
            "url": options.url.description, "runners": String(runners), "orders": String(options.orders),
        ]
        return result
    }
}
