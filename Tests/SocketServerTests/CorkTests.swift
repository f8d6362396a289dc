import Foundation
import Platform
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    @Suite struct CorkTests {
        @Test func corkedSendsLeaveInOneWritevOnUncork() async throws {
            let writes = Counter()
            let writesWhileCorked = Counter()
            let corked = CorkFlag()
            let faulty = Syscalls(injectingFaults: { call in
                if call == .sendVectors {
                    _ = writes.increment()
                    if corked.isSet { _ = writesWhileCorked.increment() }
                }
                return nil
            })
            let pieces = (0..<5).map { pattern(count: 100 + $0, seed: $0) }
            let collector = HandlerCollector(echoes: false) { connection in
                connection.cork()
                corked.set(true)
                for piece in pieces { _ = connection.send(piece) }
                corked.set(false)
                let before = writes.count
                connection.uncork()
                #expect(writes.count == before + 1, "uncork writes the queued pieces in one writev")
            }
            let (server, port) = try startServer(collector: collector) { $0.syscalls = faulty }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            let expected = pieces.flatMap { $0 }
            #expect(await eventually(timeout: .seconds(10)) { client.receivedCount >= expected.count })
            #expect(client.received == expected)
            #expect(writesWhileCorked.count == 0, "nothing is written while corked")
        }
    }
}

private final class CorkFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set(_ newValue: Bool) { lock.lock(); value = newValue; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
