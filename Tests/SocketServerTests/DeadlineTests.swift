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

        @Test func anUpperDeadlineNeitherFiresNorShortensTheLingerOnceACloseIsUnderWay() async throws {
            let readsAfterClose = Counter()
            let collector = HandlerCollector(echoes: false, onOpen: { connection in
                connection.deadline = connection.loop.now + 100
                connection.close(flushFirst: true)
                // The shared field is the linger time's now: the upper deadline reads nil and
                // setting it changes nothing.
                if connection.deadline == nil { _ = readsAfterClose.increment() }
                connection.deadline = connection.loop.now + 50
                if connection.deadline == nil { _ = readsAfterClose.increment() }
            })
            let (server, port) = try startServer(collector: collector) {
                $0.tickMilliseconds = 20
                $0.connection.lingerMilliseconds = 400
            }
            defer { server.stop() }
            // A peer that never closes its end, so the half-closed connection waits out the linger.
            let peer = try RawSocket(port: port)
            defer { peer.close() }
            let started = ContinuousClock.now
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            let elapsed = ContinuousClock.now - started
            let handler = try #require(collector.handlers.first)
            #expect(handler.closeReason == .localClose, "a half-closed connection ends at its linger time")
            #expect(handler.deadlineCount == 0)
            #expect(readsAfterClose.count == 2)
            #expect(elapsed >= .milliseconds(350), "the linger was cut short after \(elapsed)")
        }

        @Test func aPeerAddressIsKeptWithItsFamilyBytesAndPort() throws {
            let addresses = try SocketAddress.resolve(host: "192.0.2.33", port: 4321)
                + SocketAddress.resolve(host: "2001:db8::8a2e:370:7334", port: 65535)
                + SocketAddress.resolve(host: "::ffff:10.1.2.3", port: 1)
                + SocketAddress.resolve(host: "::1", port: 0)
            #expect(addresses.count == 4)
            for address in addresses {
                let kept = PeerAddress(address).socketAddress
                #expect(kept == address)
                #expect(kept.description == address.description)
                #expect(kept.ipAddress == address.ipAddress)
                #expect(kept.port == address.port)
            }
            #expect(MemoryLayout<PeerAddress>.size <= 19, "one is stored per connection")
        }
    }
}
