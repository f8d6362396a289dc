import BangbangCore
import BangbangProtocol
import Foundation
import Testing
@testable import BangbangServer
@testable import BangbangStorage

/// A store with users registered through the domain, as the server would.
private struct Accounts {
    var store = AccountStore()
    var now = Timestamp(milliseconds: 1_767_225_600_000)
    var generator = SystemRandomNumberGenerator()

    mutating func register(_ phone: String) throws -> UserID {
        let issue = try store.decideCodeRequest(phone: phone, purpose: .login, requester: nil, clientIP: "10.0.0.1",
                                                now: now, using: &generator)
        store.apply(.codeIssued(issue))
        let decision = store.decideCodeLogin(phone: phone, code: issue.code, device: nil, now: now, using: &generator)
        for event in decision.throttle { store.apply(event) }
        let event = try decision.outcome.get()
        store.apply(event)
        now = now.adding(milliseconds: 61_000)
        return try #require(event.openedSession).user
    }

    mutating func apply(_ event: AccountEvent) { store.apply(event) }

    mutating func applyToBeRunner(_ user: UserID) throws {
        store.apply(try store.decideVerificationSubmission(user: user, realName: "Li Lei", studentID: "S-1",
                                                           school: "North", now: now))
    }
}

@Suite struct BuiltInAdministratorTests {
    @Test func approvalIsTheDomainsDecisionRecordedAsUserZero() throws {
        var accounts = Accounts()
        let applicant = try accounts.register("13800138001")
        try accounts.applyToBeRunner(applicant)
        #expect(BuiltInAdministrator.pendingVerifications(accounts.store).map(\.id) == [applicant])
        #expect(BuiltInAdministrator.pendingVerifications(accounts.store).first?.isAdministrator == false,
                "the proxy trick must not show the applicant as an administrator")

        let event = try BuiltInAdministrator.decideVerification(accounts.store, user: applicant, reason: nil, now: accounts.now)
        guard case .verificationDecided(let decision) = event else { Issue.record("\(event)"); return }
        #expect(decision.administrator == BuiltInAdministrator.id && decision.isApproved && decision.user == applicant)
        accounts.apply(event)
        #expect(accounts.store.canRunErrands(applicant))
        #expect(!accounts.store.isAdministrator(applicant))
        #expect(BuiltInAdministrator.pendingVerifications(accounts.store).isEmpty)
        #expect(throws: DomainError.self) {
            try BuiltInAdministrator.decideVerification(accounts.store, user: applicant, reason: nil, now: accounts.now)
        }
    }

    @Test func rejectionReasonsAreValidatedByTheDomain() throws {
        var accounts = Accounts()
        let applicant = try accounts.register("13800138002")
        try accounts.applyToBeRunner(applicant)
        do {
            _ = try BuiltInAdministrator.decideVerification(accounts.store, user: applicant,
                                                            reason: String(repeating: "x", count: 201), now: accounts.now)
            Issue.record("a 201-character reason was accepted")
        } catch {
            #expect(error.code == .invalidField)
        }
        let event = try BuiltInAdministrator.decideVerification(accounts.store, user: applicant, reason: "blurry photo",
                                                                now: accounts.now)
        guard case .verificationDecided(let decision) = event else { Issue.record("\(event)"); return }
        #expect(!decision.isApproved && decision.reason == "blurry photo" && decision.administrator.rawValue == 0)
    }

    @Test func grantingTheOnlyUserWorksAndRevokingFollowsTheRules() throws {
        var accounts = Accounts()
        accounts.store.policy.administratorPhones = [try PhoneNumber(parsing: "13800138009")]
        let only = try accounts.register("13800138003")
        let granted = try BuiltInAdministrator.decideAdministrator(accounts.store, user: only, isGranted: true, now: accounts.now)
        guard case .administratorChanged(let change) = granted else { Issue.record("\(granted)"); return }
        #expect(change.user == only && change.grantedBy.rawValue == 0 && change.isAdministrator && change.at == accounts.now)
        accounts.apply(granted)
        #expect(accounts.store.isAdministrator(only))
        #expect(throws: DomainError.self) {
            try BuiltInAdministrator.decideAdministrator(accounts.store, user: only, isGranted: true, now: accounts.now)
        }
        accounts.apply(try BuiltInAdministrator.decideAdministrator(accounts.store, user: only, isGranted: false, now: accounts.now))
        #expect(!accounts.store.isAdministrator(only))
        #expect(throws: DomainError.self) {
            try BuiltInAdministrator.decideAdministrator(accounts.store, user: only, isGranted: false, now: accounts.now)
        }
        let configured = try accounts.register("13800138009")
        do {
            _ = try BuiltInAdministrator.decideAdministrator(accounts.store, user: configured, isGranted: false, now: accounts.now)
            Issue.record("a configured administrator was revoked")
        } catch {
            #expect(error.code == .forbidden)
        }
        do {
            _ = try BuiltInAdministrator.decideAdministrator(accounts.store, user: UserID(99), isGranted: true, now: accounts.now)
            Issue.record("a missing user was granted")
        } catch {
            #expect(error.code == .notFound)
        }
    }

    @Test func theEventsItBuildsSurviveTheJournalRoundTrip() throws {
        let event = BuiltInAdministrator.makeAdministratorChange(user: UserID(7), isGranted: false,
                                                                 at: Timestamp(milliseconds: 42))
        let decoded = try JournalEntry.decode(JournalEntry.account(event).encoded())
        guard case .account(let replayed) = decoded else { Issue.record("\(decoded)"); return }
        #expect(replayed == event)
    }

    @Test func lookupsSeeEverythingAndFeedbackIsEmptyWithoutAccounts() throws {
        var accounts = Accounts()
        #expect(BuiltInAdministrator.feedbackPage(accounts.store, before: nil, limit: 20) == nil)
        #expect(BuiltInAdministrator.pendingVerifications(accounts.store).isEmpty)
        let user = try accounts.register("13800138004")
        accounts.apply(try accounts.store.decideFeedback(user: user, text: "hello", contact: nil, now: accounts.now))
        #expect(BuiltInAdministrator.feedbackPage(accounts.store, before: nil, limit: 20)?.entries.map(\.text) == ["hello"])
        let view = try BuiltInAdministrator.user(accounts.store, phone: "+8613800138004")
        #expect(view.id == user && view.phone != nil && view.isAdministrator == false)
        #expect(throws: DomainError.self) { try BuiltInAdministrator.user(accounts.store, phone: "13800138005") }
    }
}

@Suite struct AdminSecretTests {
    @Test func comparisonNeedsEveryByteAndTheLength() {
        let secret = "0123456789abcdef"
        #expect(AdminSecret.matches(secret, secret))
        #expect(!AdminSecret.matches("0123456789abcdee", secret))
        #expect(!AdminSecret.matches("1123456789abcdef", secret))
        #expect(!AdminSecret.matches("0123456789abcde", secret))
        #expect(!AdminSecret.matches(secret + "0", secret))
        #expect(!AdminSecret.matches("", secret))
    }

    @Test func createWritesAFreshOwnerOnlySecretThatReadReturns() throws {
        let directory = NSTemporaryDirectory() + "admin-secret-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(AdminSecret.read(from: directory) == nil)
        let first = try AdminSecret.create(in: directory)
        #expect(first.count == 64 && first.allSatisfy(\.isHexDigit))
        #expect(AdminSecret.read(from: directory) == first)
        let mode = try FileManager.default.attributesOfItem(atPath: AdminSecret.path(in: directory))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let second = try AdminSecret.create(in: directory)
        #expect(second != first && AdminSecret.read(from: directory) == second)
    }
}

@Suite struct AdminInvocationTests {
    @Test func commandsBecomeTheirRequests() throws {
        let approve = try AdminInvocation.parse(["approve", "12", "--data-dir", "/srv/bb", "--json"])
        #expect(approve.command == .approve(user: 12) && approve.printsJSON && approve.mode == .auto)
        #expect(approve.serverArguments == ["--data-dir", "/srv/bb"])
        #expect(approve.command.request?.operation == "admin.decide_verification")
        #expect(approve.command.request?.data == ["user_id": 12, "decision": "approve"])
        #expect(approve.command.isChange)

        let reject = try AdminInvocation.parse(["reject", "3", "--reason=photo unreadable", "--offline"])
        #expect(reject.command == .reject(user: 3, reason: "photo unreadable") && reject.mode == .offline)
        #expect(try AdminInvocation.parse(["user", "--phone", "13800138000"]).command == .userByPhone("13800138000"))
        #expect(try AdminInvocation.parse(["feedback", "--limit", "5"]).command.request?.data == ["limit": 5])
        #expect(try AdminInvocation.parse(["journal", "--echo"]).serverArguments == ["--echo"])
        let online = try AdminInvocation.parse(["pending", "--url", "ws://[::1]:9/ws", "--config", "/etc/bb.conf"])
        #expect(online.url == "ws://[::1]:9/ws" && online.serverArguments == ["--config", "/etc/bb.conf"])
        #expect(try AdminInvocation.parse(["pending"]).url == nil)
        #expect(!online.command.isChange && AdminCommand.journal.request == nil)
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-keyout", directory.appendingPathComponent("key.pem").path, "-out", path, "-days", "1",
                             "-subj", "/CN=bangbang", "-addext", "subjectAltName=\(names)"]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ConfigurationError("openssl req failed") }
    }
}

@Suite struct AdminOutputTests {
    @Test func listsBecomeTablesAndObjectsKeyValueLines() {
        let reply: JSONValue = ["users": [
            ["id": 1, "profile": ["nickname": "Ann"], "is_verified_runner": false],
            ["id": 22, "profile": ["nickname": "Bo"], "phone": "+8613800138000"],
        ]]
        let table = AdminOutput.render(reply).split(separator: "\n").map(String.init)
        #expect(table[0] == "users (2):")
        #expect(table[1].hasPrefix("ID") && table[1].contains("PROFILE.NICKNAME") && table[1].contains("PHONE"))
        #expect(table[2].contains("Ann") && table[2].contains("no"))
        #expect(table[3].contains("22") && table[3].contains("+8613800138000"))

        let single = AdminOutput.render(["user": ["id": 5, "verification": ["status": "approved"]], "empty": [],
                                         "counts": [:]])
        #expect(single.contains("user.verification.status  approved") && single.contains("empty: none"))
        #expect(single.contains("counts: none"))
    }
}
