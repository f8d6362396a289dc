import Foundation
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests.TLSTests {
    @Test func reloadedCertificateServesNewConnectionsAndABadOneChangesNothing() async throws {
        let first = try TestCertificate()
        let second = try TestCertificate()
        let collector = HandlerCollector(echoes: true)
        let (server, port) = try startTLSServer(first, collector: collector)
        defer { server.stop() }
        let loop = EventLoop()

        func connects(trusting certificate: TestCertificate) async throws -> Bool {
            let context = try TLSContext(configuration: .client(trustedCertificatesPath: certificate.certificatePath))
            let client = RecordingHandler()
            client.onOpen = { _ = $0.send(Array("hello".utf8)) }
            try SocketClient.connect(host: "localhost", port: port, loop: loop, tls: context, handler: client)
            _ = await eventually(timeout: .seconds(10)) { client.received == Array("hello".utf8) || client.closeReason != nil }
            return client.received == Array("hello".utf8)
        }

        #expect(try await connects(trusting: first))
        try server.reloadTLS(TLSConfiguration(certificatePath: second.certificatePath, keyPath: second.keyPath))
        #expect(try await connects(trusting: second), "new connections get the reloaded certificate")
        #expect(try await !connects(trusting: first), "the old certificate is no longer served")

        #expect(throws: SocketError.self) {
            try server.reloadTLS(TLSConfiguration(certificatePath: "/nonexistent.pem", keyPath: "/nonexistent.key"))
        }
        #expect(try await connects(trusting: second), "a failed reload keeps the certificate in use")
    }
}
