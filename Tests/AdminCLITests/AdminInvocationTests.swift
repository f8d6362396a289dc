// `bangbang admin`'s command line: what each one parses into, the request it sends, the refusals
// that name the problem, and where the online mode connects.
import PartitionOwner
import BangbangProtocol
import Foundation
import Testing
import TestSupport
@testable import bangbang
import BangbangApplication
import BangbangServer
import ScaleOut

@Suite struct AdminInvocationTests {
    @Test func commandsBecomeTheirRequests() throws {
        let approve = try AdminInvocation.parse(["approve", "12", "--data-dir", "/srv/bb", "--json"])
        #expect(approve.command == .administer(.approve(user: 12)) && approve.printsJSON && approve.mode == .auto)
        #expect(approve.serverArguments == ["--data-dir", "/srv/bb"])
        #expect(approve.command.request?.operation == "admin.decide_verification")
        #expect(approve.command.request?.data == ["user_id": 12, "decision": "approve"])
        #expect(approve.command.isChange)

        let reject = try AdminInvocation.parse(["reject", "3", "--reason=photo unreadable", "--offline"])
        #expect(reject.command == .administer(.reject(user: 3, reason: "photo unreadable")) && reject.mode == .offline)
        #expect(try AdminInvocation.parse(["user", "--phone", "13800138000"]).command == .administer(.userByPhone("13800138000")))
        #expect(try AdminInvocation.parse(["feedback", "--limit", "5"]).command.request?.data == ["limit": 5])
        #expect(try AdminInvocation.parse(["journal", "--echo"]).serverArguments == ["--echo"])
        let online = try AdminInvocation.parse(["pending", "--url", "ws://[::1]:9/ws", "--config", "/etc/bb.conf"])
        #expect(online.url == "ws://[::1]:9/ws" && online.serverArguments == ["--config", "/etc/bb.conf"])
        #expect(try AdminInvocation.parse(["pending"]).url == nil)
        #expect(!online.command.isChange && AdminCommand.journal.request == nil)
    }

    @Test func theBackupAndRestoreCommandsParseAndAreListed() throws {
        #expect(try AdminInvocation.parse(["backup", "/tmp/b", "--data-dir", "/d"]).command == .backup(directory: "/tmp/b"))
        #expect(try AdminInvocation.parse(["restore", "/tmp/b", "--force"]).command == .restore(directory: "/tmp/b", force: true))
        #expect(try AdminInvocation.parse(["restore", "/tmp/b"]).command == .restore(directory: "/tmp/b", force: false))
        #expect(throws: ConfigurationError.self) { try AdminInvocation.parse(["backup"]) }
        #expect(AdminInvocation.helpText.contains("backup DIR") && AdminInvocation.helpText.contains("restore DIR"))
    }

    /// Each administrator's action becomes its own request; the commands that work on the data
    /// directory's files send none.
    @Test func everyActionSendsItsOwnRequestAndOnlyActionsSendOne() throws {
        let expected: [(OfflineAdmin.Action, String, Bool)] = [
            (.pendingVerifications, "admin.pending_verifications", false),
            (.approve(user: 1), "admin.decide_verification", true),
            (.reject(user: 2, reason: "blurry"), "admin.decide_verification", true),
            (.feedback(limit: 5, before: 9), "admin.list_feedback", false),
            (.user(id: 3), "admin.user", false),
            (.userByPhone("13800138000"), "admin.user", false),
            (.order(id: 4), "admin.order", false),
            (.grantAdmin(user: 5), "admin.grant_admin", true),
            (.revokeAdmin(user: 6), "admin.revoke_admin", true),
        ]
        for (action, operation, changes) in expected {
            let command = AdminCommand.administer(action)
            #expect(command.request?.operation == operation, "\(action)")
            #expect(command.isChange == changes, "\(action)")
        }
        #expect(AdminCommand.administer(.reject(user: 2, reason: "blurry")).request?.data
                == ["user_id": .integer(2), "decision": "reject", "reason": "blurry"])
        for command in [AdminCommand.journal, .backup(directory: "/b"), .restore(directory: "/b", force: true)] {
            #expect(command.request == nil && !command.isChange, "\(command)")
        }
    }

    @Test func serverOptionsPassThroughWithTheirValues() throws {
        let invocation = try AdminInvocation.parse(["pending", "--echo", "--shards-per-type", "4", "--dev=true"])
        #expect(invocation.serverArguments == ["--echo", "--shards-per-type", "4", "--dev=true"])
        #expect(ServerOptions.takesValue("data-dir") == true && ServerOptions.takesValue("echo") == false)
        #expect(ServerOptions.takesValue("launch") == nil)
    }

    @Test(arguments: [
        ([], "which command"),
        (["launch"], "launch"),
        (["approve"], "USER_ID"),
        (["approve", "0"], "USER_ID"),
        (["approve", "1", "2"], "USER_ID"),
        (["reject", "4"], "--reason"),
        (["pending", "extra"], "no operands"),
        (["pending", "--bogus"], "--bogus"),
        (["pending", "--url"], "--url"),
        (["feedback", "--limit", "x"], "--limit"),
    ])
    func badCommandLinesAreRefusedNamingTheProblem(arguments: [String], mentioned: String) {
        do {
            _ = try AdminInvocation.parse(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(error.message.contains(mentioned), "\(error.message)")
        }
    }

    @Test func theOnlineEndpointFollowsTheServersConfiguration() throws {
        let plain = try AdminOnline.endpoint(for: try AdminInvocation.parse(["pending"]), configuration: ServerConfiguration())
        #expect(plain.url.description == "ws://127.0.0.1:8080/ws")
        #expect(AdminCLI.loopbackHost("0.0.0.0") == "127.0.0.1" && AdminCLI.loopbackHost("::") == "[::1]")

        // A TLS-only server: wss:// on loopback, its own certificate trusted and its name checked.
        let certificate = try SelfSignedCertificate(names: "DNS:*.example.edu,DNS:bangbang.example.edu,IP:10.0.0.1")
        var secure = ServerConfiguration()
        secure.host = "0.0.0.0"
        secure.port = 8443
        secure.tlsCertificatePath = certificate.path
        let derived = try AdminOnline.endpoint(for: try AdminInvocation.parse(["pending"]), configuration: secure)
        #expect(derived.url.description == "wss://127.0.0.1:8443/ws")
        #expect(derived.trustedCertificatePaths == [certificate.path] && derived.usesSystemTrustStore)
        #expect(derived.serverName == "bangbang.example.edu", "the first name that is not a wildcard")

        let explicit = try AdminOnline.endpoint(
            for: try AdminInvocation.parse(["pending", "--url", "wss://[::1]:9000/ws", "--ca-file", "/etc/ca.pem",
                                            "--server-name", "admin.example.edu"]),
            configuration: secure)
        #expect(explicit.url.host == "::1" && explicit.url.port == 9000)
        #expect(explicit.trustedCertificatePaths == ["/etc/ca.pem"] && !explicit.usesSystemTrustStore)
        #expect(explicit.serverName == "admin.example.edu")

        #expect(throws: ConfigurationError.self) {
            try AdminOnline.endpoint(for: try AdminInvocation.parse(["pending", "--url", "ws://127.0.0.1:1/ws", "--ca-file", "x"]),
                                     configuration: ServerConfiguration())
        }
        #expect(throws: ConfigurationError.self) {
            try AdminOnline.endpoint(for: try AdminInvocation.parse(["pending", "--url", "http://127.0.0.1/ws"]),
                                     configuration: ServerConfiguration())
        }
    }
}

/// A self-signed certificate naming `names` (an openssl subjectAltName list).
private struct SelfSignedCertificate {
    let path: String

    init(names: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-admin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("cert.pem").path
        let openssl = try ChildProcess.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", directory.appendingPathComponent("key.pem").path, "-out", path, "-days", "1",
            "-subj", "/CN=bangbang", "-addext", "subjectAltName=\(names)"])
        guard openssl.status == 0 else { throw ConfigurationError("openssl req failed") }
    }
}
