import Foundation
import Platform
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    @Suite struct AcceptBackoffTests {
        @Test func descriptorExhaustionPausesAcceptingWithoutHurtingOpenConnections() async throws {
            let exhausted = Counter()
            let attempts = Counter()
            let faulty = Syscalls(injectingFaults: { call in
                guard call == .accept, exhausted.isSet else { return nil }
                _ = attempts.increment()
                return .fail(.tooManyOpenFiles)
            })
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector) { $0.acceptBackoffMilliseconds = 100; $0.syscalls = faulty }
            defer { server.stop() }
            let loop = EventLoop()
            let first = RecordingHandler()
            let firstConnection = try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: first)
            #expect(await eventually { first.openCount == 1 && server.connectionCount == 1 })

            let exhaustedSince = ContinuousClock.now
            exhausted.isSet = true
            let second = RecordingHandler()
            second.onOpen = { _ = $0.send(Array("second".utf8)) }
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: second)
            #expect(await eventually { attempts.count >= 1 })
            try await Task.sleep(nanoseconds: 500_000_000)
            // Backing off means one attempt per 100 ms pause (the sleep may overrun on a busy
            // machine, so the allowance follows the time that really passed), not a spin of
            // thousands.
            let attemptCount = attempts.count
            let pauses = (ContinuousClock.now - exhaustedSince) / .milliseconds(100)
            #expect(attemptCount <= Int(pauses) + 3, "\(attemptCount) attempts in \(pauses) pauses")
            #expect(server.connectionCount == 1)
            #expect(second.receivedCount == 0)

            _ = await onLoop(firstConnection) { $0.send(Array("still here".utf8)) }
            #expect(await eventually { first.received == Array("still here".utf8) })

            exhausted.isSet = false
            #expect(await eventually { second.received == Array("second".utf8) })
            #expect(server.connectionCount == 2)
        }
    }
}
