// Measures server memory per idle connection. Opt-in (it opens 10,000 sockets):
//   BANGBANG_MEASURE_RSS=1 swift test --filter idleConnectionMemory
// The peers live in a separate python3 process so that only the server's side is counted.
import Foundation
import Glibc
import Testing
import TestSupport
@testable import SocketServer

private func residentSetBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return digits * 1024
    }
    return 0
}

private let peerScript = """
import socket, sys, resource
resource.setrlimit(resource.RLIMIT_NOFILE, (20000, 20000))
port, count = int(sys.argv[1]), int(sys.argv[2])
peers = []
for i in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    peers.append(s)
print("ready", flush=True)
sys.stdin.read()
"""

extension SocketServerTests {
    @Suite struct IdleMemoryMeasurement {
        @Test(.enabled(if: ProcessInfo.processInfo.environment["BANGBANG_MEASURE_RSS"] != nil),
              .timeLimit(.minutes(2)))
        func idleConnectionMemory() async throws {
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = min(limit.rlim_max, 20_000)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)

            let count = 10_000
            let collector = HandlerCollector(echoes: false)
            let (server, port) = try startServer(collector: collector) { $0.maxConnections = 20_000 }
            defer { server.stop() }
            // Warm the loops and allocator with a first batch so one-time costs are excluded.
            let log = NSTemporaryDirectory() + "bangbang-idle-peers-\(UUID().uuidString).log"
            defer { unlink(log) }
            let warmUp = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c", peerScript, String(port), "200"],
                                          logPath: log, standardInput: .pipe)
            #expect(await eventually(timeout: .seconds(30)) { server.connectionCount == 200 }, "\(warmUp.output())")
            warmUp.closeStandardInput()
            warmUp.waitUntilExit()
            #expect(await eventually(timeout: .seconds(30)) { server.connectionCount == 0 })
            try await Task.sleep(nanoseconds: 300_000_000)

            let before = residentSetBytes()
            let peers = try ChildProcess(executable: "/usr/bin/env", arguments: ["python3", "-c", peerScript, String(port), String(count)],
                                         logPath: log, standardInput: .pipe)
            #expect(await eventually(timeout: .seconds(90)) { server.connectionCount == count }, "\(peers.output())")
            try await Task.sleep(nanoseconds: 1_000_000_000)
            let after = residentSetBytes()
            let perConnection = (after - before) / count
            print("idle connections: \(count), VmRSS before \(before / 1024) KiB, after \(after / 1024) KiB, "
                + "per connection \(perConnection) bytes")
            peers.closeStandardInput()
            peers.waitUntilExit()
            #expect(perConnection <= 2048)
        }
    }
}
