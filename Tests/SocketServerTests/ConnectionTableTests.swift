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
    }
}
