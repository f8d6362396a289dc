// The application protocol over a WebSocketClient: requests with ids, replies matched back to
// their completions, events handed to the scenario, and per-operation latency.
//
// Theory of operation
// -------------------
// Each client gets a `SessionState` keyed by its tag: the next request id and the requests in
// flight. `request` writes `{"id":…,"op":…,"data":…}` with JSONWriter, records the send time
// and keeps the completion; the reply (matched by id, since replies may come out of order)
// records the round trip in the histogram `op_<operation>` and counts error codes. Messages
// with an "event" field go to `didReceiveEvent`. Everything runs on the worker's loop, so the
// completions may touch worker state freely.
import BangbangProtocol
import SocketServer
import WebSocketProtocol

/// A reply to one request.
struct Reply {
    var isSuccess: Bool
    /// The reply's "data" as the server wrote it (empty when it had none); parsed on access, so
    /// an acknowledgement that nobody inspects costs no JSON tree.
    var dataBytes: [UInt8]
    var data: JSONValue {
        guard !dataBytes.isEmpty else { return .null }
        return (try? dataBytes.withUnsafeBytes { try JSONParser.parse($0) }) ?? .null
    }
    /// The error code of a failed request ("order_taken"), or nil.
    var errorCode: String?
    var errorMessage: String?
    /// When the reply arrived (monotonic nanoseconds).
    var receivedAt: UInt64
}

class ProtocolWorker: Worker, @unchecked Sendable {
    struct Pending {
        var operation: String
        var sentAt: UInt64
        var completion: (Reply) -> Void
    }

    struct SessionState {
        var nextID: Int64 = 1
        var pending: [Int64: Pending] = [:]
    }

    private var sessions: [Int: SessionState] = [:]
    /// Identity of each client, by tag.
    var participants: [Int: Participant] = [:]
    /// The administrator's connection (worker 0 only).
    var administrator: WebSocketClient?

    // A setup phase: one asynchronous step applied to many clients, a bounded number at a time.
    private var phaseItems: [WebSocketClient] = []
    private var phaseNext = 0
    private var phaseInFlight = 0
    private var phaseStep: ((WebSocketClient, @escaping (Bool) -> Void) -> Void)?
    /// Steps of the current phase that succeeded and failed.
    var phaseSucceeded = 0
    var phaseFailed = 0
    /// Steps of the current phase not yet finished.
    var phaseRemaining: Int { phaseItems.count - phaseSucceeded - phaseFailed }
    /// Latency histograms by operation name, merged into the result at the end.
    var operationLatency: [String: LatencyHistogram] = [:]
    var errorCounts: [String: Int64] = [:]
    var requestsInFlight = 0
    var malformedMessages = 0

    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        result.checks.insert("malformed_messages")
    }

    /// Sends `operation` with `data` and calls `completion` with the reply on the loop. When the
    /// connection ends first, `completion` gets a failure with code "connection_lost".
    func request(_ client: WebSocketClient, _ operation: String, _ data: JSONValue = [:],
                 completion: @escaping (Reply) -> Void) {
        var state = sessions[client.tag] ?? SessionState()
        let id = state.nextID
        state.nextID += 1
        var writer = JSONWriter(capacity: 128)
        writer.write(.object(["id": .integer(id), "op": .string(operation), "data": data]))
        let sentAt = MonotonicClock.nanoseconds()
        guard client.isOpen, client.send(text: writer.bytes) != .dropped else {
            sessions[client.tag] = state
            completion(Reply(isSuccess: false, dataBytes: [], errorCode: "connection_lost",
                             errorMessage: "the connection is closed", receivedAt: sentAt))
            return
        }
        state.pending[id] = Pending(operation: operation, sentAt: sentAt, completion: completion)
        sessions[client.tag] = state
        requestsInFlight += 1
    }

    /// Applies `step` to every client of `items`, at most `limit` at a time; progress is in
    /// `phaseSucceeded`, `phaseFailed` and `phaseRemaining`. Call on the loop.
    func runPhase(_ items: [WebSocketClient], limit: Int = 64,
                  _ step: @escaping (WebSocketClient, @escaping (Bool) -> Void) -> Void) {
        precondition(phaseRemaining == 0, "one setup phase at a time")
        phaseItems = items
        phaseNext = 0
        phaseInFlight = 0
        phaseSucceeded = 0
        phaseFailed = 0
        phaseStep = step
        advancePhase(limit: limit)
    }

    private func advancePhase(limit: Int) {
        while phaseInFlight < limit, phaseNext < phaseItems.count, let step = phaseStep {
            let client = phaseItems[phaseNext]
            phaseNext += 1
            phaseInFlight += 1
            step(client) { succeeded in
                self.phaseInFlight -= 1
                if succeeded { self.phaseSucceeded += 1 } else { self.phaseFailed += 1 }
                self.advancePhase(limit: limit)
            }
        }
    }

    /// Open clients whose participant has `role`.
    func openClients(_ role: ParticipantRole) -> [WebSocketClient] {
        clients.filter { $0.isOpen && participants[$0.tag]?.role == role }
    }

    /// The server's limit on requests in flight per connection (protocol/README.md, Limits);
    /// past it the server answers `rate_limited`, so load generators stay below it.
    static let maxRequestsInFlight = 64

    /// Requests of `client` still waiting for a reply.
    func pendingCount(_ client: WebSocketClient) -> Int { sessions[client.tag]?.pending.count ?? 0 }

    override func beginMeasurement() {
        operationLatency.removeAll()
        errorCounts.removeAll()
    }

    // MARK: Hooks

    /// A pushed event (`message` is the whole object: "event", "seq", "data", …).
    func didReceiveEvent(_ client: WebSocketClient, name: String, message: JSONValue, receivedAt: UInt64) {}

    // MARK: Receiving

    override func didReceive(_ client: WebSocketClient, message: UnsafeRawBufferPointer) {
        let receivedAt = MonotonicClock.nanoseconds()
        if let members = EnvelopeScanner.scan(message), members.event == nil, let idRange = members.id,
           let okRange = members.ok, let id = EnvelopeScanner.integer(message, idRange),
           EnvelopeScanner.matches(message, okRange, "true") || EnvelopeScanner.matches(message, okRange, "false") {
            let data = members.data.map { Array(UnsafeRawBufferPointer(rebasing: message[$0])) } ?? []
            var error: JSONValue?
            if let range = members.error {
                error = try? JSONParser.parse(UnsafeRawBufferPointer(rebasing: message[range]))
            }
            complete(client, id: id, isSuccess: EnvelopeScanner.matches(message, okRange, "true"), data: data,
                     error: error, receivedAt: receivedAt)
            return
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(message)
        } catch {
            malformedMessages += 1
            recordFailure("a server message is not JSON: \(error)")
            return
        }
        if case .string(let name)? = json["event"] {
            if json["type"] == nil, case .integer(let sequence)? = json["seq"] {
                // A personal event: remember its position for auth.resume.
                participants[client.tag]?.lastSequence = sequence
            }
            didReceiveEvent(client, name: name, message: json, receivedAt: receivedAt)
            return
        }
        guard case .integer(let id)? = json["id"], case .bool(let isSuccess)? = json["ok"] else {
            malformedMessages += 1
            recordFailure("a server message is neither a reply nor an event")
            return
        }
        complete(client, id: id, isSuccess: isSuccess, data: json["data"].map(JSONWriter.encode) ?? [],
                 error: json["error"], receivedAt: receivedAt)
    }

    private func complete(_ client: WebSocketClient, id: Int64, isSuccess: Bool, data: [UInt8], error: JSONValue?,
                          receivedAt: UInt64) {
        guard let pending = sessions[client.tag]?.pending.removeValue(forKey: id) else {
            malformedMessages += 1
            recordFailure("a reply to request \(id), which is not in flight")
            return
        }
        requestsInFlight -= 1
        operationLatency[pending.operation, default: LatencyHistogram()].record(nanoseconds: receivedAt &- pending.sentAt)
        var reply = Reply(isSuccess: isSuccess, dataBytes: data, errorCode: nil, errorMessage: nil, receivedAt: receivedAt)
        if !isSuccess {
            if case .string(let code)? = error?["code"] { reply.errorCode = code }
            if case .string(let text)? = error?["message"] { reply.errorMessage = text }
            errorCounts["\(pending.operation) \(reply.errorCode ?? "unknown")", default: 0] += 1
        }
        pending.completion(reply)
    }

    override func didClose(_ client: WebSocketClient, failure: String?) {
        guard let state = sessions.removeValue(forKey: client.tag) else { return }
        let now = MonotonicClock.nanoseconds()
        for (_, pending) in state.pending.sorted(by: { $0.key < $1.key }) {
            requestsInFlight -= 1
            pending.completion(Reply(isSuccess: false, dataBytes: [], errorCode: "connection_lost",
                                     errorMessage: failure ?? "closed", receivedAt: now))
        }
    }

    override func finalResult() -> RunResult {
        var part = super.finalResult()
        for (operation, histogram) in operationLatency {
            part.histograms["op_" + operation.replacingDots()] = histogram
        }
        var errors: Int64 = 0
        for (key, count) in errorCounts {
            part.add(count, to: "error_" + key.replacingDots().replacingSpaces())
            errors += count
        }
        part.add(errors, to: "error_replies")
        part.add(Int64(malformedMessages), to: "malformed_messages")
        return part
    }
}

extension String {
    /// "order.accept" → "order_accept", for metric names.
    func replacingDots() -> String { String(map { $0 == "." ? "_" : $0 }) }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " ? "_" : $0 }) }
}
