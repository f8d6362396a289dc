import Foundation
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    @Suite struct DeadlineTests {
        @Test func deadlineFiresOnceThenStaysCleared() async throws {
            let collector = HandlerCollector(echoes: true) { $0.deadline = $0.loop.now + 200 }
            let (server, port) = try startServer(collector: collector) { $0.tickMilliseconds = 50 }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually { collector.handlers.first?.deadlineCount == 1 })
            try await Task.sleep(nanoseconds: 400_000_000)
            let handler = try #require(collector.handlers.first)
            #expect(handler.deadlineCount == 1)
            #expect(handler.closeReason == nil)
            let connection = try #require(handler.connection)
            #expect(await onLoop(connection) { $0.deadline } == nil)
        }

        @Test func deadlineRearmedInsideTheCallbackFiresAgain() async throws {
            // Re-armed from the callback twice (set before the connection opens, so a busy test
            // thread cannot miss the first firing): three firings in all, then none.
            let fired = Counter()
            let collector = HandlerCollector(echoes: true, onOpen: { $0.deadline = $0.loop.now + 100 },
                                             onDeadline: { connection in
                if fired.increment() < 3 { connection.deadline = connection.loop.now + 100 }
            })
            let (server, port) = try startServer(collector: collector) { $0.tickMilliseconds = 50 }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually { collector.handlers.first != nil })
            let handler = try #require(collector.handlers.first)
            #expect(await eventually { handler.deadlineCount == 3 })
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(handler.deadlineCount == 3, "a deadline nobody re-armed fired again")
        }

        @Test func clearedDeadlineNeverFires() async throws {
            let collector = HandlerCollector(echoes: true) { connection in
                connection.deadline = connection.loop.now + 100
                connection.deadline = nil
            }
            let (server, port) = try startServer(collector: collector) { $0.tickMilliseconds = 50 }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually { collector.handlers.first?.openCount == 1 })
            try await Task.sleep(nanoseconds: 400_000_000)
            #expect(collector.handlers.first?.deadlineCount == 0)
        }
    }
}
