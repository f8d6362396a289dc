// The per-loop half of a scenario. Each event loop gets one Worker that owns that loop's
// clients and statistics, so the hot path takes no locks and shares no cache lines: counters
// and histograms are plain properties, merged only when the run ends.
import SocketServer
import WebSocketProtocol

/// Base class of every scenario's worker: opens its share of connections with a bounded
/// number of handshakes in flight and keeps the connection counters. Subclasses override the
/// `did…` hooks.
///
/// Confinement: `@unchecked Sendable` so it can be handed to its loop with `loop.execute`;
/// all state is touched only on `loop.queue` (the harness reads it with `queue.sync`).
class Worker: WebSocketClientDelegate, @unchecked Sendable {
    let loop: EventLoop
    let options: Options
    let settings: ClientSettings
    /// This worker's position and the number of workers in the process.
    let index: Int
    let workerCount: Int

    private(set) var clients: [WebSocketClient] = []
    private var planned: [Int] = []
    private var nextPlanned = 0
    private var handshakesInFlight = 0
    private let handshakeLimit: Int

    /// Run-wide counters of this loop; merged into the result at the end.
    var result: RunResult
    var opened = 0
    var connectFailures = 0
    var unexpectedCloses = 0
    var closed = 0
    /// Connections on which permessage-deflate was negotiated.
    var compressed = 0
    /// True once the scenario has started closing on purpose.
    var isStopping = false
    /// Completions of the measured phase over time, under `timelineName` in the result.
    var timeline = Timeline(origin: MonotonicClock.nanoseconds())
    var timelineName: String?
    /// First few failure messages, for the report.
    var failureSamples: [String] = []

    init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        self.loop = loop
        self.index = index
        self.workerCount = workerCount
        self.options = options
        self.settings = settings
        handshakeLimit = max(1, options.connectConcurrency / workerCount)
        result = RunResult(scenario: options.scenario.rawValue)
        result.checks = ["connect_failures", "unexpected_closes"]
    }

    /// The source address for the client numbered `tag`, spreading tags over 127.0.0.2….
    func sourceAddress(for tag: Int) -> String? {
        let sources = options.effectiveSources
        guard sources > 0 else { return nil }
        return "127.0.0.\(2 + tag % sources)"
    }

    /// Queues clients numbered `tags` for connecting. Call on the loop.
    func connect(tags: [Int]) {
        planned.append(contentsOf: tags)
        connectMore()
    }

    /// Clients still to connect or connecting.
    var pendingConnections: Int { planned.count - nextPlanned + handshakesInFlight }

    private func connectMore() {
        while handshakesInFlight < handshakeLimit, nextPlanned < planned.count, !isStopping {
            let tag = planned[nextPlanned]
            nextPlanned += 1
            handshakesInFlight += 1
            let client = makeClient(tag: tag)
            clients.append(client)
            client.start(sourceAddress: sourceAddress(for: tag))
        }
    }

    /// Creates the client for `tag`; subclasses may configure it.
    func makeClient(tag: Int) -> WebSocketClient {
        WebSocketClient(tag: tag, loop: loop, settings: settings, delegate: self)
    }

    /// Closes every client (close handshake). Call on the loop.
    func closeAll() {
        isStopping = true
        for client in clients where !client.isClosed { client.close() }
    }

    /// Clients not yet closed.
    var liveClients: Int { clients.count - closed - connectFailures }

    func recordFailure(_ message: String) {
        if failureSamples.count < 5, !failureSamples.contains(message) { failureSamples.append(message) }
    }

    // MARK: Hooks for subclasses

    func didOpen(_ client: WebSocketClient) {}
    func didReceive(_ client: WebSocketClient, message: UnsafeRawBufferPointer) {}
    func didClose(_ client: WebSocketClient, failure: String?) {}
    func didProcessInput(_ client: WebSocketClient) {}
    /// The measured phase starts: forget statistics gathered while setting up.
    func beginMeasurement() {}

    /// This worker's part of the result. Call on the loop.
    func finalResult() -> RunResult {
        var part = result
        part.add(Int64(opened), to: "connections_opened")
        part.add(Int64(connectFailures), to: "connect_failures")
        part.add(Int64(unexpectedCloses), to: "unexpected_closes")
        if options.compress { part.add(Int64(compressed), to: "connections_compressed") }
        if let timelineName { part.timelines[timelineName] = timeline }
        return part
    }

    // MARK: WebSocketClientDelegate

    final func clientDidOpen(_ client: WebSocketClient) {
        handshakesInFlight -= 1
        opened += 1
        if client.isCompressed { compressed += 1 }
        if options.scenario == .connections { timeline.record(at: client.openedAt) }
        result.histograms["connect", default: LatencyHistogram()]
            .record(nanoseconds: client.openedAt &- client.startedAt)
        didOpen(client)
        connectMore()
    }

    final func client(_ client: WebSocketClient, didReceive message: UnsafeRawBufferPointer) {
        didReceive(client, message: message)
    }

    final func clientDidProcessInput(_ client: WebSocketClient) {
        didProcessInput(client)
    }

    final func client(_ client: WebSocketClient, didCloseWith failure: String?) {
        if client.openedAt == 0 {
            handshakesInFlight -= 1
            if isStopping { closed += 1 } else {
                connectFailures += 1
                recordFailure(failure ?? "closed before the handshake completed")
            }
            connectMore()
        } else {
            closed += 1
            if let failure, !isStopping {
                unexpectedCloses += 1
                recordFailure(failure)
            }
        }
        didClose(client, failure: failure)
    }
}
