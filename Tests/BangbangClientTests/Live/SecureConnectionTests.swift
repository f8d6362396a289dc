// wss:// through the library against a TLS-only server: the chain is checked against a test
// CA, the name against the URL's host (or the name given), and a failure says why.
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

extension LiveServerTests {
    @Suite(.timeLimit(.minutes(2))) struct SecureConnectionTests {
        static func tlsServer() throws -> (ServerProcess, TestCertificateAuthority) {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-ca-\(UUID().uuidString)")
            let authority = try TestCertificateAuthority(in: scratch)
            let server = try ServerProcess.start(["--tls-cert", authority.certificatePath, "--tls-key", authority.keyPath])
            return (server, authority)
        }

        @Test func aWholeExchangeOverWSS() async throws {
            let (server, authority) = try Self.tlsServer()
            defer { authority.remove() }
            let store = MemorySessionStore()
            let connection = BangbangConnection(configuration: Live.configuration(port: server.port, secure: true,
                                                                                  trusting: [authority.caPath]),
                                                store: store)
            let updates = UpdateRecorder(connection)
            try await connection.connect()
            #expect(try await connection.send(GetServerInfo()).orderTypes == OrderType.allCases)
            _ = try await Live.logIn(connection, phone: Live.freshPhone())
            let order = try await connection.send(.publish(.bounty(BountyDetails(title: "Secure", description: "over TLS"),
                                                                   campus: "North", deadline: Live.inAnHour, tip: 100)))
            #expect(await updates.waitFor(.published, of: order.id))

            // And it resumes over TLS after the server restarts.
            try server.restart()
            // A request sent while the old connection is closing may be dropped (the library never
            // resends, as it cannot know whether the server acted): wait for the reconnect first.
            #expect(await eventually { updates.updates.filter { $0 == .stateChanged(.online) }.count == 2 })
            #expect(try await connection.send(GetOrder(order.id)).id == order.id)
            #expect(updates.isGapless)
            await connection.disconnect()
        }

        @Test func anUntrustedOrMisnamedCertificateIsRefusedWithTheReason() async throws {
            let (server, authority) = try Self.tlsServer()
            defer { authority.remove() }
            func failure(trusting: [String], serverName: String?) async -> String {
                var configuration = Live.configuration(port: server.port, secure: true, trusting: trusting, serverName: serverName)
                configuration.requestTimeout = .seconds(2)
                let connection = BangbangConnection(configuration: configuration, store: MemorySessionStore())
                defer { Task { await connection.disconnect() } }
                do {
                    try await connection.connect()
                    return "connected"
                } catch {
                    return "\(error)"
                }
            }
            // The system trust store does not know the test CA.
            let untrusted = await failure(trusting: [], serverName: nil)
            #expect(untrusted.contains("certificate verify failed"), "\(untrusted)")
            // Trusted chain, wrong name: refused too.
            let misnamed = await failure(trusting: [authority.caPath], serverName: "bangbang.example.edu")
            #expect(misnamed.contains("mismatch"), "\(misnamed)")
            // The address is reached and the certificate checked against the name it carries.
            #expect(await failure(trusting: [authority.caPath], serverName: "localhost") == "connected")
            #expect(server.log.contains("reason=tls_handshake"), "the server counts the refused handshakes")
        }
    }
}
