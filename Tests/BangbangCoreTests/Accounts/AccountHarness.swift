import Testing
import TestSupport
@testable import BangbangCore

/// Plays the server's part: applies throttle events, "journals" account events, keeps a clock.
struct AccountHarness {
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    static let start = Timestamp(milliseconds: 1_767_225_600_000)  // 2026-01-01T00:00:00Z

    var store: AccountStore
    var generator = SeededGenerator(seed: 2026)
    var journal: [AccountEvent] = []
    var now = AccountHarness.start
    var clientIP = "10.0.0.1"

    init(policy: AccountPolicy = AccountPolicy()) {
        store = AccountStore(policy: policy)
    }

    mutating func advance(milliseconds: Int64) { now = now.adding(milliseconds: milliseconds) }
    mutating func advance(seconds: Int64) { advance(milliseconds: seconds * 1000) }

    mutating func commit(_ event: AccountEvent) {
        journal.append(event)
        store.apply(event)
    }

    /// Applies the throttle part, then commits the event or throws the error.
    @discardableResult
    mutating func run(_ decision: AccountDecision) throws -> AccountEvent {
        for event in decision.throttle { store.apply(event) }
        let event = try decision.outcome.get()
        commit(event)
        return event
    }

    @discardableResult
    mutating func requestCode(_ phone: String, purpose: CodePurpose = .login, requester: UserID? = nil) throws -> CodeIssue {
        let issue = try store.decideCodeRequest(phone: phone, purpose: purpose, requester: requester,
                                                clientIP: clientIP, now: now, using: &generator)
        store.apply(.codeIssued(issue))
        return issue
    }

    mutating func codeLogin(_ phone: String, code: String, device: String? = nil) throws -> AccountEvent {
        try run(store.decideCodeLogin(phone: phone, code: code, device: device, now: now, using: &generator))
    }

    /// Requests a code, logs in with it, and moves the clock past the resend spacing.
    mutating func logIn(_ phone: String, device: String? = nil) throws -> (user: UserID, token: String) {
        let issue = try requestCode(phone)
        let event = try codeLogin(phone, code: issue.code, device: device)
        advance(seconds: 61)
        let session = try #require(event.openedSession)
        return (session.user, SessionToken.make(for: session, secret: Self.secret))
    }

    /// Decides against the current store and clock, then commits.
    mutating func decide(_ body: (AccountStore, Timestamp) throws -> AccountEvent) throws {
        commit(try body(store, now))
    }
}

/// Runs `body` and checks that it fails with `code` (and `field`, when given).
func expectAccountError<T>(_ code: ErrorCode, field: String? = nil, sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: () throws -> T) {
    do {
        let value = try body()
        Issue.record("expected \(code), got \(value)", sourceLocation: sourceLocation)
    } catch let error as DomainError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let field { #expect(error.field == field, sourceLocation: sourceLocation) }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

/// A wrong guess at `code`, differing in the last digit.
func wrongSMSCode(_ code: String) -> String {
    String(code.dropLast()) + (code.last == "0" ? "1" : "0")
}
