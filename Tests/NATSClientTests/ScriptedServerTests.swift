import Foundation
import Glibc
import NATSClient
import NATSTestSupport
import Synchronization
import Testing

/// The connection against a scripted server on a loopback socket: what a real server does
/// rarely (PING the client, send garbage, go silent) on demand.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ScriptedServerTests {
    /// One accepted connection at a time, read and written with blocking calls on a thread.
    final class ScriptedServer: @unchecked Sendable {
        // Confinement: `listener` is fixed; each accepted descriptor is used only by the test
        // thread that called `accept`.
        let port: Int
        private let listener: Int32

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.listener = listener
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(listener, raw, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, raw, &length) == 0
                }
            }
            guard ok else { throw HarnessError("listen: \(errno)") }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(listener) }

        /// Accepts one client, with a receive timeout so a broken test cannot hang.
        func accept() -> Int32 {
            let descriptor = Glibc.accept(listener, nil, nil)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return descriptor
        }

        func send(_ text: String, to descriptor: Int32) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }

        /// Reads until `text` has been seen (or the timeout, or end of stream); returns all read.
        func read(until text: String, from descriptor: Int32) -> String {
            var seen = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !seen.contains(text) {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                seen += String(decoding: buffer[0..<count], as: UTF8.self)
            }
            return seen
        }
    }

    private func configuration(_ server: ScriptedServer) -> NATSConfiguration {
        var configuration = NATSConfiguration(servers: [NATSServerAddress(host: "127.0.0.1", port: server.port)], name: "scripted")
        configuration.reconnectWaitMilliseconds = 20
        configuration.pingIntervalMilliseconds = 200
        return configuration
    }

    /// Plays the handshake: INFO, then waits for CONNECT…PING and answers PONG.
    private func handshake(_ server: ScriptedServer, _ descriptor: Int32) -> String {
        server.send("INFO {\"server_id\":\"s\",\"max_payload\":1048576,\"headers\":true}\r\n", to: descriptor)
        let seen = server.read(until: "PING\r\n", from: descriptor)
        server.send("PONG\r\n", to: descriptor)
        return seen
    }

    @Test func theHandshakeSendsConnectThenPingAndTheServersPingIsAnswered() async throws {
        let server = try ScriptedServer()
        let connection = NATSConnection(configuration: configuration(server))
        let script = Task.detached { () -> (String, String) in
            let descriptor = server.accept()
            defer { close(descriptor) }
            let greeting = self.handshake(server, descriptor)
            // Keepalive PINGs of the client may come first; the server's PING must get a PONG.
            server.send("PING\r\n", to: descriptor)
            let answer = server.read(until: "PONG\r\n", from: descriptor)
            return (greeting, answer)
        }
        try await connection.connect()
        let (greeting, answer) = await script.value
        #expect(greeting.hasPrefix("CONNECT {\"verbose\":false"))
        #expect(greeting.contains("\"name\":\"scripted\""))
        #expect(greeting.contains("SUB _INBOX."))
        #expect(answer.contains("PONG\r\n"))
        await connection.close()
    }

    @Test func aServerThatBreaksTheProtocolIsLeftAndTheNextOneUsed() async throws {
        let server = try ScriptedServer()
        let connection = NATSConnection(configuration: configuration(server))
        let script = Task.detached { () -> (String, [Int32]) in
            let first = server.accept()
            _ = self.handshake(server, first)
            server.send("MSG a 1 -5\r\n", to: first)
            // The client drops the connection and comes back for a new handshake.
            let second = server.accept()
            return (self.handshake(server, second), [first, second])
        }
        try await connection.connect()
        let (again, descriptors) = await script.value
        defer { for descriptor in descriptors { close(descriptor) } }
        #expect(again.hasPrefix("CONNECT "))
        try await eventually("the reconnect") { connection.reconnectCount == 1 && connection.isConnected }
        await connection.close()
    }

    @Test func aServerThatStopsAnsweringPingsIsDeclaredStale() async throws {
        let server = try ScriptedServer()
        let connection = NATSConnection(configuration: configuration(server))
        let script = Task.detached { () -> (Bool, [Int32]) in
            let first = server.accept()
            _ = self.handshake(server, first)
            // Silent from here: two keepalive PINGs go unanswered, then the client must leave.
            let second = server.accept()
            return (self.handshake(server, second).hasPrefix("CONNECT "), [first, second])
        }
        let started = Date()
        try await connection.connect()
        let (isHandshake, descriptors) = await script.value
        defer { for descriptor in descriptors { close(descriptor) } }
        #expect(isHandshake)
        try await eventually("the reconnect") { connection.reconnectCount == 1 }
        // Two unanswered PINGs at 200 ms, then the third tick: well under two seconds.
        #expect(Date().timeIntervalSince(started) < 3)
        await connection.close()
    }

    /// A connection through its handshake with a scripted server, and the server's end of it.
    private func connected() async throws -> (ScriptedServer, NATSConnection, Int32) {
        let server = try ScriptedServer()
        let connection = NATSConnection(configuration: configuration(server))
        let accepted = Task.detached { () -> Int32 in
            let descriptor = server.accept()
            _ = self.handshake(server, descriptor)
            return descriptor
        }
        try await connection.connect()
        return (server, connection, await accepted.value)
    }

    @Test func aRequestWithACallbackHearsItsReplyNoRespondersItsTimeoutOrCloseOnceOnTheLoop() async throws {
        let (server, connection, descriptor) = try await connected()
        defer { close(descriptor) }
        let outcomes = Mutex<[String: [String]]>([:])
        let loop = connection.loop
        func hear(_ name: String) -> @Sendable (Result<NATSMessage, NATSClientError>) -> Void {
            { result in
                let said = switch result {
                case .success(let message): "reply " + String(decoding: message.payload, as: UTF8.self)
                case .failure(let error): "\(error)"
                }
                outcomes.withLock { $0[name, default: []].append(said + (loop.isCurrent ? "" : " off the loop")) }
            }
        }
        for name in ["answered", "absent", "left"] {
            try connection.startRequest(name, payload: Array(name.utf8), timeoutMilliseconds: 30_000, onReply: hear(name))
        }
        try connection.startRequest("slow", payload: [], timeoutMilliseconds: 200, onReply: hear("slow"))
        let published = await Task.detached { server.read(until: "PUB slow ", from: descriptor) }.value
        func inbox(of subject: String) throws -> String {
            let line = try #require(published.split(separator: "\r\n").first { $0.hasPrefix("PUB \(subject) ") })
            return String(line.split(separator: " ")[2])
        }
        server.send("MSG \(try inbox(of: "answered")) 1 2\r\nok\r\n", to: descriptor)
        server.send("HMSG \(try inbox(of: "absent")) 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n", to: descriptor)
        try await eventually("the reply, the 503 and the timeout") { outcomes.withLock { $0.count } == 3 }
        await connection.close()
        let heard = outcomes.withLock { $0 }
        #expect(heard == ["answered": ["reply ok"], "absent": ["no responders for absent"], "slow": ["timed out"],
                          "left": ["connection closed"]])
    }

    @Test func aLostSocketFailsCallbackRequestsAtOnceWhileAwaitedRequestsHearTheirReplyOnTheNextSocket() async throws {
        let (server, connection, firstSocket) = try await connected()
        let heard = Mutex<[String]>([])
        try connection.startRequest("lost", payload: [], timeoutMilliseconds: 30_000) { result in
            heard.withLock { $0.append("\(result.map { _ in "reply" })") }
        }
        let kept = try connection.startRequest("kept", payload: [], timeoutMilliseconds: 30_000)
        let second = Task.detached { () -> (String, Int32) in
            let published = server.read(until: "PUB kept ", from: firstSocket)
            close(firstSocket)
            let descriptor = server.accept()
            _ = self.handshake(server, descriptor)
            return (published, descriptor)
        }
        let (published, secondSocket) = await second.value
        defer { close(secondSocket) }
        try await eventually("the callback hears of the loss") { !heard.withLock { $0 }.isEmpty }
        #expect(heard.withLock { $0 } == ["failure(connection lost)"])
        let line = try #require(published.split(separator: "\r\n").first { $0.hasPrefix("PUB kept ") })
        server.send("MSG \(line.split(separator: " ")[2]) 1 4\r\nlate\r\n", to: secondSocket)
        #expect(String(decoding: try await kept.reply().payload, as: UTF8.self) == "late")
        await connection.close()
        #expect(heard.withLock { $0 }.count == 1)
    }
}
