// The loop's connection table (Readiness.swift): slots, their reuse, stale epoll tokens, and the
// context that connections of one listener share instead of each holding a copy.
import Foundation
import Glibc
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    @Suite struct ConnectionTableTests {
        /// A connection that is never started: enough for the table, which only looks at it.
        private func makeConnection(on loop: EventLoop, context: ConnectionContext) -> Connection {
            Connection(descriptor: -1, remoteAddress: .v4(sockaddr_in()), loop: loop, context: context, tls: nil,
                       handler: nil, state: .connecting)
        }

        private func token(slot: Int32, generation: UInt32) -> UInt64 { UInt64(generation) << 32 | UInt64(slot) }

        @Test func aSlotGivenBackNoLongerAnswersForItsOldToken() async {
            let loop = EventLoop()
            let context = ConnectionContext(options: ConnectionOptions())
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    let first = makeConnection(on: loop, context: context)
                    let second = makeConnection(on: loop, context: context)
                    loop.register(first)
                    loop.register(second)
                    #expect(loop.connectionCount == 2)
                    #expect(loop.readiness.connection(for: token(slot: first.slot, generation: 0)) === first)
                    let oldSlot = first.slot
                    loop.unregister(first)
                    #expect(first.slot == -1)
                    #expect(loop.connectionCount == 1)
                    #expect(loop.readiness.connection(for: token(slot: oldSlot, generation: 0)) == nil,
                            "an event fetched before the slot was given back is stale")
                    let third = makeConnection(on: loop, context: context)
                    loop.register(third)
                    #expect(third.slot == oldSlot, "the slot is reused")
                    #expect(loop.readiness.connection(for: token(slot: oldSlot, generation: 0)) == nil)
                    #expect(loop.readiness.connection(for: token(slot: oldSlot, generation: 1)) === third)
                    var visited: [ObjectIdentifier] = []
                    loop.forEachConnection { visited.append(ObjectIdentifier($0)) }
                    #expect(Set(visited) == [ObjectIdentifier(second), ObjectIdentifier(third)])
                    loop.unregister(second)
                    loop.unregister(third)
                    #expect(loop.connectionCount == 0)
                    done.resume()
                }
            }
        }

        @Test func connectionsOfOneListenerShareItsContext() async throws {
            let collector = HandlerCollector(echoes: false)
            let (server, port) = try startServer(collector: collector) { $0.connection.highWaterMark = 12_345 }
            defer { server.stop() }
            let peers = try (0..<3).map { _ in try RawSocket(port: port) }
            defer { for peer in peers { peer.close() } }
            #expect(await eventually { collector.handlers.filter { $0.openCount == 1 }.count == 3 })
            let connections = collector.handlers.compactMap(\.connection)
            #expect(connections.count == 3)
            let contexts = Set(connections.map { ObjectIdentifier($0.context) })
            #expect(contexts.count == 1, "one context for the listener, not a copy per connection")
            #expect(connections[0].context.options.highWaterMark == 12_345)
        }

        @Test func theServerCountsAConnectionOnceWhenItIsReleased() async throws {
            let collector = HandlerCollector(echoes: false)
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let peers = try (0..<4).map { _ in try RawSocket(port: port) }
            #expect(await eventually { server.connectionCount == 4 })
            for peer in peers.prefix(3) { peer.close() }
            #expect(await eventually { server.connectionCount == 1 })
            #expect(await eventually { collector.handlers.filter { $0.closeReason != nil }.count == 3 })
            peers[3].close()
            #expect(await eventually { server.connectionCount == 0 })
        }

        /// Closes `other` when its own connection's close is reported: a teardown from inside
        /// the batch of releases.
        final class ClosingOnClose: ConnectionHandler, @unchecked Sendable {
            var other: Connection?
            let closes: Counter
            init(closes: Counter) { self.closes = closes }
            func connectionDidOpen(_ connection: Connection) {}
            func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
            func connectionDidDrain(_ connection: Connection) {}
            func connectionDeadlineReached(_ connection: Connection) {}
            func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
                _ = closes.increment()
                other?.close(flushFirst: false)
            }
        }

        @Test func aConnectionClosedWhileReleasesRunIsReleasedToo() async throws {
            let closes = Counter()
            let handlers = [ClosingOnClose(closes: closes), ClosingOnClose(closes: closes)]
            let made = Counter()
            var configuration = SocketServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.eventLoopCount = 1
            let server = TCPServer(configuration: configuration) { _ in handlers[made.increment() - 1] }
            let port = try server.start()[0].port
            defer { server.stop() }
            let first = try RawSocket(port: port)
            #expect(await eventually { server.connectionCount == 1 })
            let second = try RawSocket(port: port)
            defer { second.close() }
            #expect(await eventually { server.connectionCount == 2 })
            let loop = server.group.loops[0]
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                loop.execute {
                    var connections: [Connection] = []
                    loop.forEachConnection { connections.append($0) }
                    let byHandler = connections.sorted { ($0.handler === handlers[0] ? 0 : 1) < ($1.handler === handlers[0] ? 0 : 1) }
                    handlers[0].other = byHandler[1]
                    done.resume()
                }
            }
            first.close()
            #expect(await eventually { closes.count == 2 }, "the second is released after the first's release closed it")
            #expect(await eventually { server.connectionCount == 0 })
        }
    }
}
