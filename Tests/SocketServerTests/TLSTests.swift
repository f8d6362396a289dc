import Foundation
import Testing
import TestSupport
@testable import SocketServer

/// A self-signed certificate for `localhost`, made with the openssl command line.
struct TestCertificate {
    let certificatePath: String
    let keyPath: String

    init() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bangbang-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificatePath = directory.appendingPathComponent("cert.pem").path
        keyPath = directory.appendingPathComponent("key.pem").path
        let openssl = try ChildProcess.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", keyPath, "-out", certificatePath, "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"])
        guard openssl.status == 0 else { throw SocketError.tls("openssl req failed") }
    }
}

extension SocketServerTests {
    @Suite struct TLSTests {
        func startTLSServer(_ certificate: TestCertificate, collector: HandlerCollector,
                            configure: (inout SocketServerConfiguration) -> Void = { _ in }) throws -> (TCPServer, Int) {
            try startServer(collector: collector) {
                $0.tls = TLSConfiguration(certificatePath: certificate.certificatePath, keyPath: certificate.keyPath)
                configure(&$0)
            }
        }

        @Test func tlsRoundTripWithSelfSignedCertificate() async throws {
            let certificate = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector)
            defer { server.stop() }
            let context = try TLSContext(configuration: .client(verifiesPeer: false))
            let loop = EventLoop()
            let client = RecordingHandler()
            let payload = pattern(count: 300 * 1024, seed: 3)
            client.onOpen = { _ = $0.send(payload) }
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, tls: context, handler: client)
            #expect(await eventually(timeout: .seconds(10)) { client.receivedCount >= payload.count })
            #expect(client.received == payload)
            // The server saw plaintext, not records.
            #expect(collector.handlers.first?.received == payload)
        }

        @Test func tlsClientVerifiesAgainstATrustedCertificate() async throws {
            let certificate = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector)
            defer { server.stop() }
            let context = try TLSContext(configuration: .client(trustedCertificatesPath: certificate.certificatePath))
            let loop = EventLoop()
            let client = RecordingHandler()
            client.onOpen = { _ = $0.send(Array("verified".utf8)) }
            try SocketClient.connect(host: "localhost", port: port, loop: loop, tls: context, handler: client)
            #expect(await eventually { client.received == Array("verified".utf8) })
        }

        @Test func tlsClientRefusesATrustedCertificateForAnotherName() async throws {
            let certificate = try TestCertificate()  // names localhost only
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector)
            defer { server.stop() }
            let context = try TLSContext(configuration: .client(trusting: [certificate.certificatePath],
                                                                includingSystemTrustStore: false))
            let loop = EventLoop()
            let byAddress = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, tls: context, handler: byAddress)
            #expect(await eventually { byAddress.closeReason != nil })
            guard case .tlsFailure(let failure)? = byAddress.closeReason else {
                Issue.record("expected a TLS failure, got \(String(describing: byAddress.closeReason))")
                return
            }
            #expect(failure.kind == .handshake && failure.message.contains("mismatch"), "\(failure)")
            #expect(byAddress.openCount == 0)

            let byName = RecordingHandler()
            byName.onOpen = { _ = $0.send(Array("named".utf8)) }
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, tls: context, serverName: "localhost",
                                     handler: byName)
            #expect(await eventually { byName.received == Array("named".utf8) },
                    "the address is reached, the certificate checked against the name given")
        }

        @Test func aCertificateFileNamesItsHost() throws {
            let certificate = try TestCertificate()
            #expect(try TLSCertificateFile.hostName(ofCertificateAt: certificate.certificatePath) == "localhost")
            #expect(throws: SocketError.self) { try TLSCertificateFile.hostName(ofCertificateAt: certificate.keyPath) }
            #expect(throws: SocketError.self) { try TLSCertificateFile.hostName(ofCertificateAt: "/nonexistent.pem") }
        }

        @Test func tlsClientRejectsAnUntrustedCertificate() async throws {
            let certificate = try TestCertificate()
            let other = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector)
            defer { server.stop() }
            let context = try TLSContext(configuration: .client(trustedCertificatesPath: other.certificatePath))
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, tls: context, handler: client)
            #expect(await eventually { client.closeReason != nil })
            guard case .tlsFailure? = client.closeReason else {
                Issue.record("expected a TLS failure, got \(String(describing: client.closeReason))")
                return
            }
            #expect(client.openCount == 0)
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.openCount == 0)
        }

        @Test func tlsServerClosesAPeerThatSendsGarbage() async throws {
            let certificate = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector)
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            raw.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8) + pattern(count: 5000))
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            guard case .tlsFailure? = collector.handlers.first?.closeReason else {
                Issue.record("expected a TLS failure")
                return
            }
            #expect(collector.handlers.first?.openCount == 0)
            #expect(collector.handlers.first?.receivedCount == 0)
        }

        @Test func tlsHandshakeThatNeverStartsTimesOut() async throws {
            let certificate = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector) {
                $0.connection.tlsHandshakeTimeoutMilliseconds = 200
                $0.tickMilliseconds = 50
            }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .tlsFailure(TLSFailure(kind: .timeout, message: "handshake timed out")))
        }

        @Test func tlsGracefulCloseDeliversCloseNotify() async throws {
            let certificate = try TestCertificate()
            let collector = HandlerCollector(echoes: true)
            let (server, port) = try startTLSServer(certificate, collector: collector)
            defer { server.stop() }
            let context = try TLSContext(configuration: .client(verifiesPeer: false))
            let loop = EventLoop()
            let client = RecordingHandler()
            let connection = try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, tls: context, handler: client)
            #expect(await eventually { client.openCount == 1 })
            await onLoop(connection) {
                _ = $0.send(Array("bye".utf8))
                $0.close(flushFirst: true)
            }
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .peerClosed)
            #expect(collector.handlers.first?.received == Array("bye".utf8))
            #expect(await eventually { client.closeReason == .localClose })
        }
    }
}
