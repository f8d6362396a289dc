// Client connections on a real listener over loopback, played by blocking sockets: the parts of
// `ClientConnection` that only show with several connections (the loop's shared output) or over
// time (the listener's timeouts), and the handshake state that lasts across plain requests.
import Foundation
import Glibc
import Synchronization
import Testing
import TestSupport
import SocketServer
import WebSocketProtocol
@testable import WebSocketServer

@Suite(.serialized, .timeLimit(.minutes(1)))
struct ClientConnectionTests {
    /// Files that may be asked for again on the same connection (no `Connection: close`).
    struct Site: StaticContent {
        func response(for head: HTTPRequestHead) -> HTTPResponse {
            HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: Array("ok\n".utf8))
        }
    }

    /// A listener on 127.0.0.1 with one loop, `/echo`, and these limits; `stop()` it when done.
    struct Listener {
        let server: TCPServer
        let port: Int

        init(handshakeTimeoutMilliseconds: Int64 = 10_000, opensEndpointAtFirstMessage: Bool = false,
             log: EndpointLog? = nil) throws {
            var configuration = SocketServerConfiguration(host: "127.0.0.1", port: 0)
            configuration.eventLoopCount = 1
            configuration.tickMilliseconds = 20
            let route = WebSocketRoute(configuration: .echo, opensEndpointAtFirstMessage: opensEndpointAtFirstMessage,
                                       makeEndpoint: { _ in
                                           log?.record("made")
                                           return LoggingEchoEndpoint(log: log)
                                       })
            let router = HTTPRouter(webSocketRoutes: ["/echo": route],
                                    handshake: ServerHandshakeConfiguration(),
                                    plainRoutes: [:], staticSite: { Site() })
            let limits = ConnectionLimits(handshakeTimeoutMilliseconds: handshakeTimeoutMilliseconds,
                                          pingIntervalMilliseconds: 60_000, pongTimeoutMilliseconds: 10_000,
                                          maxOutputBytes: 1 << 20, addressLimiter: AddressLimiter(limit: 100))
            let context = ClientConnectionContext(router: router, limits: limits, metrics: ConnectionMetrics())
            server = TCPServer(configuration: configuration) { ClientConnection(connection: $0, context: context) }
            port = try server.start()[0].port
        }

        func stop() { server.stop() }
    }

    /// A client speaking over a blocking socket, reading with a timeout.
    struct Peer {
        let descriptor: Int32
        private static let key = "dGhlIHNhbXBsZSBub25jZQ=="

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            #expect(rc == 0)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        func write(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }

        func write(_ text: String) { write(Array(text.utf8)) }

        /// Reads exactly `count` bytes, or fewer if the stream ends or the read times out.
        func read(_ count: Int) -> [UInt8] {
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: count)
            while result.count < count {
                let got = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, count - result.count) }
                if got <= 0 { break }
                result += buffer[0..<got]
            }
            return result
        }

        /// Reads one HTTP response head (up to the blank line) and, with `bodyLength`, its body.
        func readResponse(bodyLength: Int = 0) -> String {
            var head: [UInt8] = []
            while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                let byte = read(1)
                if byte.isEmpty { break }
                head += byte
            }
            return String(decoding: head + read(bodyLength), as: UTF8.self)
        }

        func upgradeRequest() -> String {
            "GET /echo HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: \(Self.key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        }

        /// Sends the upgrade request and reads the 101.
        func upgrade() -> String {
            write(upgradeRequest())
            return readResponse()
        }

        /// Sends one masked frame.
        func send(_ opcode: Opcode, _ payload: [UInt8]) {
            var frame: [UInt8] = []
            payload.withUnsafeBytes {
                FrameEncoder.appendFrame(opcode: opcode, payload: $0, maskingKey: MaskingKey(1, 2, 3, 4), to: &frame)
            }
            write(frame)
        }

        /// Reads one short unmasked server frame: its opcode and payload, nil at the end of the stream.
        func receiveFrame() -> (opcode: UInt8, payload: [UInt8])? {
            let header = read(2)
            guard header.count == 2 else { return nil }
            let length = Int(header[1] & 0x7F)
            precondition(length < 126, "the test reads short frames only")
            return (header[0] & 0x0F, read(length))
        }

        /// True once the server has closed the stream (a read returns end of stream).
        func seesEndOfStream() -> Bool { read(1).isEmpty }

        func close() { _ = Glibc.close(descriptor) }
    }

    /// What the endpoints of a listener were told, in order.
    final class EndpointLog: Sendable {
        private let entries = Mutex<[String]>([])
        func record(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    final class LoggingEchoEndpoint: WebSocketEndpoint {
        let log: EndpointLog?
        init(log: EndpointLog?) { self.log = log }
        func webSocketDidOpen(_ channel: WebSocketChannel) { log?.record("open") }
        func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {
            log?.record("text")
            channel.send(text: bytes)
        }
        func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) { channel.send(binary: bytes) }
        func webSocketDidClose(_ channel: WebSocketChannel) { log?.record("close") }
    }

    @Test func aRouteThatWaitsForTheFirstMessageMakesItsEndpointThenAndNeverForASilentClient() async throws {
        let log = EndpointLog()
        let listener = try Listener(opensEndpointAtFirstMessage: true, log: log)
        defer { listener.stop() }
        let silent = try Peer(port: listener.port)
        #expect(silent.upgrade().hasPrefix("HTTP/1.1 101"))
        let speaking = try Peer(port: listener.port)
        defer { speaking.close() }
        #expect(speaking.upgrade().hasPrefix("HTTP/1.1 101"))
        silent.close()
        speaking.send(.ping, [7])
        #expect(speaking.receiveFrame()?.opcode == Opcode.pong.rawValue)
        #expect(log.all.isEmpty, "a ping is not a message: no endpoint yet")
        speaking.send(.text, Array("hello".utf8))
        let echo = speaking.receiveFrame()
        #expect(echo?.opcode == Opcode.text.rawValue && echo?.payload == Array("hello".utf8))
        #expect(log.all == ["made", "open", "text"], "made and opened before its first message, once")
        speaking.send(.text, Array("again".utf8))
        #expect(speaking.receiveFrame()?.payload == Array("again".utf8))
        speaking.close()
        #expect(await eventually { log.all == ["made", "open", "text", "text", "close"] },
                "the silent client's close reaches no endpoint; the other one's does")
    }

    @Test func aRouteMakesItsEndpointAtTheUpgradeByDefault() async throws {
        let log = EndpointLog()
        let listener = try Listener(log: log)
        defer { listener.stop() }
        let peer = try Peer(port: listener.port)
        #expect(peer.upgrade().hasPrefix("HTTP/1.1 101"))
        #expect(await eventually { log.all == ["made", "open"] })
        peer.close()
        #expect(await eventually { log.all == ["made", "open", "close"] })
    }

    @Test func aPeerClosingOneConnectionDoesNotCloseAnotherOnTheSameLoop() throws {
        let listener = try Listener()
        defer { listener.stop() }
        let first = try Peer(port: listener.port)
        let second = try Peer(port: listener.port)
        defer { first.close(); second.close() }
        #expect(first.upgrade().hasPrefix("HTTP/1.1 101"))
        #expect(second.upgrade().hasPrefix("HTTP/1.1 101"))

        // The first one's close makes the loop's output ask for its transport to close ...
        first.send(.close, [0x03, 0xE8])
        #expect(first.receiveFrame()?.opcode == Opcode.close.rawValue)
        #expect(first.seesEndOfStream())

        // ... which must not be carried over to the next connection the loop serves.
        for text in ["one", "two", "three"] {
            second.send(.text, Array(text.utf8))
            let echo = second.receiveFrame()
            #expect(echo?.opcode == Opcode.text.rawValue)
            #expect(echo.map { String(decoding: $0.payload, as: UTF8.self) } == text)
        }
    }

    @Test func repliesOnOneConnectionDoNotLeakIntoAnother() throws {
        let listener = try Listener()
        defer { listener.stop() }
        let peers = try (0..<3).map { _ in try Peer(port: listener.port) }
        defer { for peer in peers { peer.close() } }
        for peer in peers { #expect(peer.upgrade().hasPrefix("HTTP/1.1 101")) }
        // Interleaved: each answer comes back on its own connection only, whole.
        for round in 0..<3 {
            for (index, peer) in peers.enumerated() { peer.send(.text, Array("\(index):\(round)".utf8)) }
            for (index, peer) in peers.enumerated() {
                let echo = peer.receiveFrame()
                #expect(echo.map { String(decoding: $0.payload, as: UTF8.self) } == "\(index):\(round)")
            }
        }
        // A ping is answered on the connection that sent it.
        peers[1].send(.ping, [7, 7])
        let pong = peers[1].receiveFrame()
        #expect(pong?.opcode == Opcode.pong.rawValue)
        #expect(pong?.payload == [7, 7])
    }

    @Test func plainAnswersOnAKeptConnectionThenAnUpgradeOnIt() throws {
        let listener = try Listener()
        defer { listener.stop() }
        let peer = try Peer(port: listener.port)
        defer { peer.close() }
        for _ in 0..<2 {
            peer.write("GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let answer = peer.readResponse(bodyLength: 3)
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.hasSuffix("\r\n\r\nok\n"))
        }
        #expect(peer.upgrade().hasPrefix("HTTP/1.1 101"), "the request after plain answers is parsed afresh")
        peer.send(.text, Array("after".utf8))
        #expect(peer.receiveFrame().map { String(decoding: $0.payload, as: UTF8.self) } == "after")
    }

    @Test func aRequestThatDoesNotComeIsRefusedAtTheListenersHandshakeTimeout() throws {
        let listener = try Listener(handshakeTimeoutMilliseconds: 200)
        defer { listener.stop() }
        let peer = try Peer(port: listener.port)
        defer { peer.close() }
        let started = ContinuousClock.now
        let answer = peer.readResponse()
        #expect(answer.hasPrefix("HTTP/1.1 408"))
        #expect(ContinuousClock.now - started >= .milliseconds(150))
        #expect(ContinuousClock.now - started < .seconds(4))
    }
}
