// echo: N connections to the server's /echo endpoint, each keeping W messages of S bytes in
// flight for T seconds. The WebSocket core's benchmark: messages per second and round trips.
//
// Echo preserves order on a connection, so each connection's send times form a FIFO ring of W
// slots: a reply's round trip is now minus the oldest slot. The frame is built once per
// connection; each reply owes one new message, and the messages owed after one read are sent
// together in one write (one array of N copies of the frame) rather than one system call per
// message. Payload bytes are not collected: only message boundaries matter.
import Foundation
import SocketServer
import WebSocketProtocol

final class EchoWorker: Worker, @unchecked Sendable {
    private var isSending = false
    private var frames: [[UInt8]] = []
    private let payload: [UInt8]
    /// Ring of send times, `window` slots per local client.
    private var sendTimes: [UInt64] = []
    private var ringHeads: [Int] = []
    private var inFlight: [Int] = []
    /// Messages owed to each local client, sent when the current read has been processed.
    private var owed: [Int] = []
    private var roundTrips = LatencyHistogram()
    var messages = 0
    var outstanding = 0

    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        // Printable ASCII, so the server's UTF-8 check passes on the text frame.
        payload = (0..<options.messageSize).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        result.rates = ["messages"]
        timelineName = "messages"
    }

    private func localIndex(_ client: WebSocketClient) -> Int { client.tag / workerCount }

    override func didOpen(_ client: WebSocketClient) {
        let local = localIndex(client)
        while frames.count <= local {
            frames.append([])
            ringHeads.append(0)
            inFlight.append(0)
            owed.append(0)
            sendTimes.append(contentsOf: repeatElement(0, count: options.window))
        }
        frames[local] = client.makeFrame(text: payload) ?? []
    }

    /// Starts the measured phase: fills every connection's window. Call on the loop.
    func startSending() {
        isSending = true
        for client in clients where client.isOpen {
            owed[localIndex(client)] = options.window
            sendOwed(client)
        }
    }

    /// Ends the measured phase: replies still in flight are awaited but not counted.
    func stopSending() { isSending = false }

    private func sendOwed(_ client: WebSocketClient) {
        let local = localIndex(client)
        let count = owed[local]
        guard count > 0 else { return }
        owed[local] = 0
        let window = options.window
        let now = MonotonicClock.nanoseconds()
        for _ in 0..<count {
            sendTimes[local * window + (ringHeads[local] + inFlight[local]) % window] = now
            inFlight[local] += 1
        }
        outstanding += count
        let frame = frames[local]
        if frame.isEmpty {
            // Compressed: every message goes through the connection's compressor.
            for _ in 0..<count { payload.withUnsafeBytes { _ = client.send(text: $0) } }
        } else if count == 1 {
            client.send(frame: frame)
        } else {
            var batch: [UInt8] = []
            batch.reserveCapacity(frame.count * count)
            for _ in 0..<count { batch.append(contentsOf: frame) }
            client.send(frame: batch)
        }
    }

    override func didProcessInput(_ client: WebSocketClient) {
        if isSending { sendOwed(client) }
    }

    override func didReceive(_ client: WebSocketClient, message: UnsafeRawBufferPointer) {
        let local = localIndex(client)
        guard inFlight[local] > 0 else {
            recordFailure("an echo arrived that was never sent")
            result.add(1, to: "unexpected_messages")
            return
        }
        let now = MonotonicClock.nanoseconds()
        let window = options.window
        let sentAt = sendTimes[local * window + ringHeads[local]]
        ringHeads[local] = (ringHeads[local] + 1) % window
        inFlight[local] -= 1
        outstanding -= 1
        if isSending {
            messages += 1
            roundTrips.record(nanoseconds: now &- sentAt)
            timeline.record(at: now)
            owed[local] += 1
        }
    }

    override func didClose(_ client: WebSocketClient, failure: String?) {
        if client.openedAt != 0, frames.count > localIndex(client) {
            outstanding -= inFlight[localIndex(client)]
            inFlight[localIndex(client)] = 0
        }
    }

    override func finalResult() -> RunResult {
        var part = super.finalResult()
        part.add(Int64(messages), to: "messages")
        part.histograms["round_trip"] = roundTrips
        part.checks.insert("unexpected_messages")
        part.add(0, to: "unexpected_messages")
        return part
    }
}

enum EchoScenario {
    static func run(_ options: Options, settings: ClientSettings) -> RunResult {
        var settings = settings
        settings.collectsPayload = false
        let connections = options.share(of: options.connections)
        let harness = Harness<EchoWorker>(options: options, settings: settings) {
            EchoWorker(loop: $0, index: $1, workerCount: $2, options: $3, settings: $4)
        }
        harness.connect(count: connections)
        harness.wait(timeoutSeconds: 60, phase: "connecting",
                     progress: { "\(harness.total { $0.opened })/\(connections) open, \(harness.total { $0.connectFailures }) failed" },
                     until: { harness.total { $0.pendingConnections } == 0 })
        harness.synchronizeWithParent()

        harness.markMeasurementStart()
        let start = MonotonicClock.nanoseconds()
        harness.startOnEach { $0.startSending() }
        var previous = 0
        var previousTime = start
        harness.hold(seconds: options.durationSeconds, phase: "echo") {
            let messages = harness.total { $0.messages }
            let now = MonotonicClock.nanoseconds()
            let rate = Double(messages - previous) / (Double(now - previousTime) / 1e9)
            previous = messages
            previousTime = now
            return "\(messages) messages, \(Report.format(rate.rounded())) msg/s, \(harness.total { $0.liveClients }) open"
        }
        harness.startOnEach { $0.stopSending() }
        let duration = Double(MonotonicClock.nanoseconds() - start) / 1e9
        harness.wait(timeoutSeconds: 5, phase: "draining", progress: { "\(harness.total { $0.outstanding }) in flight" }) {
            harness.total { $0.outstanding } <= 0
        }
        harness.closeAll()
        var result = harness.gatherResult(durationSeconds: duration)
        result.parameters = [
            "url": options.url.description, "connections": String(options.connections),
            "window": String(options.window), "message_size": String(options.messageSize),
            "compress": String(options.compress), "threads": String(options.threads),
            "processes": String(options.processes),
        ]
        return result
    }
}
