import BangbangCore
import BangbangProtocol
import Foundation
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
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

    /// `bangbang admin journal` counts records by these names.
    @Test func journalRecordsAreNamedByOwnerAndKind() {
        let event = BuiltInAdministrator.makeAdministratorChange(user: UserID(7), isGranted: true,
                                                                 at: Timestamp(milliseconds: 42))
        #expect(JournalRecordNames.kind(of: JournalEntry.account(event).encoded()) == "account.administratorChanged")
        #expect(JournalRecordNames.kind(of: [0xFF, 0x00, 0x13]) == "unreadable")
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
