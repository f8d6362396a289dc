import Forwarding
import Foundation
import Glibc
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    /// A listener with `proxyProtocol` set: the header is read from the raw stream before TLS or
    /// the handler sees a byte, and anything wrong closes the connection without a reply.
    @Suite struct ProxyProtocolTests {
        static let loopback = TrustedProxies([try! AddressRange(parsing: "127.0.0.1")])
        static let v1Header = Array("PROXY TCP4 203.0.113.7 198.51.100.1 56324 443\r\n".utf8)
        static let relayed = ProxyHeader.Addresses.tcp(source: IPAddress("203.0.113.7")!, sourcePort: 56324,
                                                       destination: IPAddress("198.51.100.1")!, destinationPort: 443)

        func startProxiedServer(_ collector: HandlerCollector, trusting trusted: TrustedProxies = loopback,
                                configure: (inout SocketServerConfiguration) -> Void = { _ in }) throws -> (TCPServer, Int) {
            try startServer(collector: collector) {
                $0.proxyProtocol = trusted
                $0.tickMilliseconds = 50
                configure(&$0)
            }
        }

        @Test func theHeaderIsReadBeforeTheHandlerOpensAndWhatFollowsIsDelivered() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector)
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            let payload = Array("hello after the header".utf8)
            raw.write(Self.v1Header + payload)
            #expect(await eventually { collector.handlers.first?.receivedCount == payload.count })
            let handler = try #require(collector.handlers.first)
            #expect(handler.received == payload)
            #expect(handler.proxyHeader == ProxyHeader(version: .one, addresses: Self.relayed))
            #expect(handler.remoteAddress?.host == "127.0.0.1", "the TCP peer is still the proxy")
        }

        @Test func aHeaderDeliveredOneByteAtATimeStillOpensOnce() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector)
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            var nodelay: Int32 = 1
            setsockopt(raw.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &nodelay, socklen_t(MemoryLayout<Int32>.size))
            let header = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00, 0x0C,
                          203, 0, 113, 7, 198, 51, 100, 1, 0xDC, 0x04, 0x01, 0xBB] as [UInt8]
            for byte in header.dropLast() {
                raw.write([byte])
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            #expect((collector.handlers.first?.openCount ?? 0) == 0, "not open before the header's last byte")
            raw.write([header[header.count - 1]])
            #expect(await eventually { collector.handlers.first?.openCount == 1 })
            raw.write([0x2A])
            #expect(await eventually { collector.handlers.first?.receivedCount == 1 })
            let handler = try #require(collector.handlers.first)
            #expect(handler.openCount == 1)
            #expect(handler.received == [0x2A])
            #expect(handler.proxyHeader == ProxyHeader(version: .two, addresses: Self.relayed))
        }

        @Test func tlsStartsAfterTheHeaderEvenInTheSameSegment() async throws {
            let certificate = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector) {
                $0.tls = TLSConfiguration(certificatePath: certificate.certificatePath, keyPath: certificate.keyPath)
            }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            let session = try TLSSession(context: try TLSContext(configuration: .client(verifiesPeer: false)), serverName: nil)
            var pending = Self.v1Header
            var isComplete = false
            for _ in 0..<20 where !isComplete {
                switch session.advanceHandshake() {
                case .complete: isComplete = true
                case .needsMoreInput: break
                case .failed(let message): Issue.record("client handshake failed: \(message)"); return
                }
                pending += session.takeCiphertext() ?? []
                if !pending.isEmpty { raw.write(pending); pending = [] }
                if !isComplete {
                    let answer = raw.readSome()
                    try #require(!answer.isEmpty, "the server closed during the handshake")
                    answer.withUnsafeBytes { session.receive(ciphertext: $0) }
                }
            }
            try #require(isComplete)
            let payload = Array("secret after PROXY".utf8)
            #expect(session.send(plaintext: payload))
            raw.write(session.takeCiphertext() ?? [])
            #expect(await eventually(timeout: .seconds(10)) { collector.handlers.first?.receivedCount == payload.count })
            let handler = try #require(collector.handlers.first)
            #expect(handler.received == payload)
            #expect(handler.proxyHeader?.addresses == Self.relayed)
        }

        @Test func aPeerThatIsNotATrustedProxyIsClosedWithoutAReply() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector, trusting: TrustedProxies([try AddressRange(parsing: "10.0.0.0/8")]))
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            raw.write(Self.v1Header)
            #expect(raw.readToEnd().bytes.isEmpty, "nothing is sent back")
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .proxyHeaderRefused(.untrustedPeer))
            #expect(collector.handlers.first?.openCount == 0)
        }

        @Test(arguments: [
            (Array("GET / HTTP/1.1\r\n\r\n".utf8), ProxyHeaderError.Kind.signature),
            ([0x16, 0x03, 0x01, 0x00, 0x10], .signature),
            (Array("PROXY TCP4 203.0.113.7 198.51.100.1 56324\r\n".utf8), .line),
            ([0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8],
             .length),
        ])
        func aBadHeaderClosesTheConnectionNamingWhatWasWrong(input: [UInt8], kind: ProxyHeaderError.Kind) async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector)
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            raw.write(input)
            #expect(raw.readToEnd().bytes.isEmpty, "nothing is sent back")
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            guard case .proxyHeaderRefused(.invalid(let error))? = collector.handlers.first?.closeReason else {
                Issue.record("closed with \(String(describing: collector.handlers.first?.closeReason))")
                return
            }
            #expect(error.kind == kind)
            #expect(collector.handlers.first?.openCount == 0)
        }

        @Test func aStreamEndingInsideTheHeaderIsTruncated() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector)
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            raw.write(Array(Self.v1Header.prefix(20)))
            shutdown(raw.descriptor, Int32(SHUT_WR))
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            raw.close()
            guard case .proxyHeaderRefused(.invalid(let error))? = collector.handlers.first?.closeReason else {
                Issue.record("closed with \(String(describing: collector.handlers.first?.closeReason))")
                return
            }
            #expect(error.kind == .truncated)
        }

        @Test func noHeaderInTimeClosesTheConnection() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startProxiedServer(collector) { $0.connection.proxyHeaderTimeoutMilliseconds = 200 }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            raw.write(Array(Self.v1Header.prefix(10)))
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .proxyHeaderRefused(.timedOut))
            #expect(raw.readToEnd() == ([], true))
        }

        @Test func aListenerWithoutProxyProtocolTakesTheHeaderAsData() async throws {
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            raw.write(Self.v1Header)
            #expect(await eventually { collector.handlers.first?.receivedCount == Self.v1Header.count })
            #expect(collector.handlers.first?.proxyHeader == nil)
        }
    }
}

extension RawSocket {
    /// One read: what arrived, or nothing at end of stream or timeout.
    func readSome() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[0..<count]) : []
    }
}
