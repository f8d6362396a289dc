import Foundation
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    @Suite struct EchoTests {
        @Test func echoRoundTripOverPlainSockets() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            let payload = Array("hello, 帮帮".utf8)
            client.onOpen = { _ = $0.send(payload) }
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually { client.received == payload })
            #expect(client.openCount == 1)
            #expect(collector.handlers.count == 1)
            #expect(server.connectionCount == 1)
        }

        @Test func largePayloadEchoesIntact() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            let payload = pattern(count: 3 * 1024 * 1024 + 17)
            client.onOpen = { _ = $0.send(payload) }
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually(timeout: .seconds(20)) { client.receivedCount >= payload.count })
            #expect(client.received == payload)
        }

        @Test func manyConnectionsAreSpreadOverEveryLoop() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector) { $0.eventLoopCount = 3 }
            defer { server.stop() }
            let clientGroup = EventLoopGroup(count: 2)
            var clients: [(RecordingHandler, [UInt8])] = []
            for index in 0..<60 {
                let handler = RecordingHandler()
                let payload = Array("connection \(index)".utf8)
                handler.onOpen = { _ = $0.send(payload) }
                try SocketClient.connect(host: "127.0.0.1", port: port, loop: clientGroup.next(), handler: handler)
                clients.append((handler, payload))
            }
            #expect(await eventually(timeout: .seconds(10)) { clients.allSatisfy { $0.0.received == $0.1 } })
            #expect(Set(collector.handlers.compactMap(\.loopIndex)) == [0, 1, 2])
            #expect(server.connectionCount == 60)
            let ids = await withTaskGroup(of: UInt64?.self) { group in
                for handler in collector.handlers {
                    if let connection = handler.connection { group.addTask { await onLoop(connection) { $0.id } } }
                }
                var ids: Set<UInt64> = []
                for await id in group { if let id { ids.insert(id) } }
                return ids
            }
            #expect(ids.count == 60)
        }

        @Test func ipv6ListenerServesIPv6Clients() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(host: "::1", collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            client.onOpen = { _ = $0.send(Array("six".utf8)) }
            try SocketClient.connect(host: "::1", port: port, loop: loop, handler: client)
            #expect(await eventually { client.received == Array("six".utf8) })
            #expect(collector.handlers.first?.remoteAddress?.host == "::1")
        }

        @Test func wildcardIPv6ListenerAlsoServesIPv4() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(host: "::", collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let overIPv4 = RecordingHandler()
            let overIPv6 = RecordingHandler()
            overIPv4.onOpen = { _ = $0.send([4]) }
            overIPv6.onOpen = { _ = $0.send([6]) }
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: overIPv4)
            try SocketClient.connect(host: "::1", port: port, loop: loop, handler: overIPv6)
            #expect(await eventually { overIPv4.received == [4] && overIPv6.received == [6] })
        }

        @Test func localhostBindsEveryFamilyOnOnePort() async throws {
            let collector = HandlerCollector(echoes: true)
            var configuration = SocketServerConfiguration(host: "localhost", port: 0)
            configuration.eventLoopCount = 1
            let server = TCPServer(configuration: configuration) { collector.make($0) }
            let addresses = try server.start()
            defer { server.stop() }
            #expect(!addresses.isEmpty)
            #expect(Set(addresses.map(\.port)).count == 1)
            #expect(addresses[0].port != 0)
        }

        @Test func clientBindsToRequestedSourceAddress() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            client.onOpen = { _ = $0.send([1, 2, 3]) }
            try SocketClient.connect(host: "127.0.0.1", port: port, sourceAddress: "127.0.0.2", loop: loop, handler: client)
            #expect(await eventually { client.received == [1, 2, 3] })
            #expect(collector.handlers.first?.remoteAddress?.host == "127.0.0.2")
        }

        @Test func bindingToAForeignSourceAddressThrows() throws {
            let loop = EventLoop()
            // TEST-NET-1 (RFC 5737) is never assigned to this host.
            #expect(throws: SocketError.self) {
                try SocketClient.connect(host: "127.0.0.1", port: 9, sourceAddress: "192.0.2.1", loop: loop,
                                         handler: RecordingHandler())
            }
        }

        @Test func refusedConnectIsReportedToTheHandler() async throws {
            // Bind and close a listener to find a port nobody listens on.
            let collector = HandlerCollector()
            let (server, port) = try startServer(collector: collector)
            server.stop()
            try await Task.sleep(nanoseconds: 50_000_000)
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually { client.closeReason != nil })
            #expect(client.closeReason == .connectFailed(.connectionRefused))
            #expect(client.openCount == 0)
        }

        @Test func connectionsBeyondTheMaximumAreRefused() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector) { $0.maxConnections = 2 }
            defer { server.stop() }
            let loop = EventLoop()
            let clients = (0..<3).map { _ in RecordingHandler() }
            for client in clients.prefix(2) {
                try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            }
            #expect(await eventually { server.connectionCount == 2 })
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: clients[2])
            #expect(await eventually { clients[2].closeReason != nil })
            #expect(clients[2].closeReason == .peerClosed || clients[2].closeReason == .ioError(.connectionReset))
            #expect(server.rejectedConnectionCount == 1)
            #expect(clients[0].closeReason == nil && clients[1].closeReason == nil)
        }

        @Test func peerCloseIsReportedOnBothSides() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            let connection = try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually { client.openCount == 1 && server.connectionCount == 1 })
            await onLoop(connection) { $0.close(flushFirst: false) }
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .peerClosed)
            // The client hears of its own close a loop turn after the teardown.
            #expect(await eventually { client.closeReason == .localClose })
            #expect(await eventually { server.connectionCount == 0 })
            #expect(await onLoop(connection) { $0.send([1]) } == .dropped)
        }

        @Test func stopClosesEveryConnection() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector)
            let loop = EventLoop()
            let clients = (0..<5).map { _ in RecordingHandler() }
            for client in clients { try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client) }
            #expect(await eventually { server.connectionCount == 5 })
            server.stop(closeConnections: true)
            #expect(await eventually { clients.allSatisfy { $0.closeReason == .peerClosed } })
            #expect(await eventually { server.connectionCount == 0 })
            #expect(collector.handlers.allSatisfy { $0.closeReason == .localClose })
        }
    }
}
