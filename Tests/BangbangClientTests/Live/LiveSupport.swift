// What the live tests share: connections to a real server, logging users in, making runners,
// and waiting for a particular update.
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

enum Live {
    /// Mainland mobile numbers no other test run uses.
    private static let phones = Counter()
    private static let base = Int64(Date().timeIntervalSince1970) % 100_000 * 1_000 + Int64(getpid() % 1_000)

    static func freshPhone() -> String {
        let number = (base * 37 + Int64(phones.next()) * 7_919) % 100_000_000
        return "+86139" + String(format: "%08lld", number)
    }

    static func configuration(port: Int, secure: Bool = false, trusting: [String] = [], serverName: String? = nil,
                              pingInterval: Duration = .seconds(15)) -> ConnectionConfiguration {
        let endpoint = ServerEndpoint(url: ServerURL(isSecure: secure, host: "127.0.0.1", port: port),
                                      trustedCertificatePaths: trusting, usesSystemTrustStore: trusting.isEmpty,
                                      serverName: serverName, connectTimeout: .seconds(10))
        // Short waits between attempts: the tests restart servers and cut connections on purpose.
        return ConnectionConfiguration(endpoint: endpoint, requestTimeout: .seconds(20), pingInterval: pingInterval,
                                       backoff: ReconnectBackoff(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1)),
                                       deviceName: "live test")
    }

    static func connection(port: Int, store: any SessionStore = MemorySessionStore(),
                           pingInterval: Duration = .seconds(15)) -> BangbangConnection {
        BangbangConnection(configuration: configuration(port: port, pingInterval: pingInterval), store: store)
    }

    /// A new user, logged in on a new connection.
    static func user(_ server: ServerProcess, port: Int? = nil, store: any SessionStore = MemorySessionStore(),
                     pingInterval: Duration = .seconds(15)) async throws -> (BangbangConnection, User) {
        let connection = Self.connection(port: port ?? server.port, store: store, pingInterval: pingInterval)
        try await connection.connect()
        let login = try await logIn(connection, phone: freshPhone())
        return (connection, login.user)
    }

    static func logIn(_ connection: BangbangConnection, phone: String) async throws -> LoginResult {
        let code = try #require(try await connection.send(RequestCode(phone: phone)).developmentCode,
                                "the server must run with --dev")
        return try await connection.send(LogInWithCode(phone: phone, code: code, device: "live test"))
    }

    /// A new user whose runner verification the built-in administrator approved.
    static func runner(_ server: ServerProcess) async throws -> (BangbangConnection, User) {
        let (connection, user) = try await Self.user(server)
        _ = try await connection.send(SubmitVerification(realName: "Li Lei", studentID: "S\(user.id)", school: "North"))
        let administrator = Self.connection(port: server.port)
        try await administrator.connect()
        #expect(try await administrator.send(LogInAsAdministrator(secret: try server.adminSecret)) == 0)
        let decided = try await administrator.send(DecideVerification(userID: user.id, decision: .approve))
        #expect(decided.isVerifiedRunner)
        await administrator.disconnect()
        return (connection, user)
    }

    static var inAnHour: Timestamp { Timestamp.now.advanced(by: .seconds(3600)) }
}

extension UpdateRecorder {
    /// The changes reported for `order`, in order.
    func changes(of order: OrderID) -> [OrderChange] {
        updates.compactMap {
            if case .event(let event) = $0, case .orderChanged(let changed, let change) = event.kind, changed.id == order {
                change
            } else {
                nil
            }
        }
    }

    /// Waits until `order` has been reported with `change`.
    func waitFor(_ change: OrderChange, of order: OrderID) async -> Bool {
        await eventually { self.changes(of: order).contains(change) }
    }

    /// The personal stream as delivered: no gap, no duplicate.
    var isGapless: Bool {
        let seqs = eventSeqs
        return zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 }
    }
}

/// The suites that start real servers, one test at a time: the machine they run on may have two
/// cores, and each test has a server and several clients of its own.
@Suite(.serialized) struct LiveServerTests {}
