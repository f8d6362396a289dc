// connections: open N WebSocket sessions (optionally logged in, optionally compressed), hold
// them for T seconds, and report the connect rate, failures and — given the server's pid — the
// server's resident memory per connection.
//
// RSS is read from /proc/PID/status before the first connect and again once every connection
// is open (in a multi-process run the parent reads it, after every child reported ready), so
// the difference divided by the connections open is the server's cost of one idle session.
import Foundation
import SocketServer
import WebSocketProtocol

final class ConnectionsWorker: ProtocolWorker, @unchecked Sendable {
    override init(loop: EventLoop, index: Int, workerCount: Int, options: Options, settings: ClientSettings) {
        super.init(loop: loop, index: index, workerCount: workerCount, options: options, settings: settings)
        result.rates = []
        timelineName = "connections_opened"
    }

}

enum ConnectionsScenario {
    static func run(_ options: Options, settings: ClientSettings) throws(SetupFailure) -> RunResult {
        var settings = settings
        settings.collectsPayload = options.login
        let connections = options.share(of: options.connections)
        let rssBefore = options.serverPID.flatMap(ProcessResources.residentKiB(of:))
        let harness = Harness<ConnectionsWorker>(options: options, settings: settings) {
            ConnectionsWorker(loop: $0, index: $1, workerCount: $2, options: $3, settings: $4)
        }
        let connectStart = MonotonicClock.nanoseconds()
        harness.connect(count: connections)
        var previous = 0
        harness.wait(timeoutSeconds: max(60, Double(connections) / 100), phase: "connecting", progress: {
            let opened = harness.total { $0.opened }
            defer { previous = opened }
            return "\(opened)/\(connections) open (+\(opened - previous)), \(harness.total { $0.connectFailures }) failed"
        }, until: { harness.total { $0.pendingConnections } == 0 })
        let connectSeconds = Double(MonotonicClock.nanoseconds() - connectStart) / 1e9
        let opened = harness.total { $0.opened }
        var loginSeconds: Double?
        if options.login {
            let loginStart = MonotonicClock.nanoseconds()
            try ProtocolSetup.logInEveryone(harness, count: opened)
            loginSeconds = Double(MonotonicClock.nanoseconds() - loginStart) / 1e9
        }
        // Let the server settle (buffers released after the handshake) before reading RSS.
        usleep(500_000)
        let rssAfter = options.serverPID.flatMap(ProcessResources.residentKiB(of:))
        harness.synchronizeWithParent()

        harness.markMeasurementStart()
        let start = MonotonicClock.nanoseconds()
        harness.hold(seconds: options.durationSeconds, phase: "holding") {
            "\(harness.total { $0.liveClients }) open, \(harness.total { $0.unexpectedCloses }) dropped"
        }
        let duration = Double(MonotonicClock.nanoseconds() - start) / 1e9
        harness.closeAll()
        var result = harness.gatherResult(durationSeconds: duration)
        result.gauges["connect_phase_seconds"] = connectSeconds
        result.gauges["connects_per_second"] = Double(opened) / max(connectSeconds, 1e-9)
        if let loginSeconds {
            result.gauges["login_phase_seconds"] = loginSeconds
            result.gauges["logins_per_second"] = Double(opened) / max(loginSeconds, 1e-9)
        }
        recordServerMemory(into: &result, before: rssBefore, after: rssAfter, connections: opened)
        result.parameters = [
            "url": options.url.description, "connections": String(options.connections),
            "compress": String(options.compress), "login": String(options.login),
            "sources": String(options.effectiveSources), "processes": String(options.processes),
        ]
        return result
    }

    static func recordServerMemory(into result: inout RunResult, before: Int?, after: Int?, connections: Int) {
        guard let before, let after else { return }
        result.gauges["server_rss_before_kib"] = Double(before)
        result.gauges["server_rss_after_kib"] = Double(after)
        if connections > 0 {
            result.gauges["server_rss_per_connection_kib"] = Double(after - before) / Double(connections)
        }
    }
}
