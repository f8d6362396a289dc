// Accounts: SMS-code and password login, sessions, profiles, phone changes, runner verification,
// administrators and feedback — the "Login" and "Personal centre" modules of the app.
//
// Theory of operation. `AccountStore` is one value that the server owns on one serial queue. It
// holds three things:
//   - `state` (`AccountState`): accounts, sessions, administrator grants, feedback. Changed only
//     by `apply(_: AccountEvent)`; every event is journaled by the server before it is applied
//     and before anyone is told, and recovery replays the journal into a fresh state. It is held
//     for every user all the time, so accounts are compact records with their sessions inside
//     (AccountRecord.swift), and a session is found through the user its token names.
//   - `throttle` (`AccountThrottle`): pending SMS codes and rate counters. Ephemeral by design
//     (see AccountThrottle.swift): changed only by `apply(_: AccountThrottleEvent)`, never
//     journaled, empty after a restart.
//   - `policy` (`AccountPolicy`): limits and deployment settings, from configuration.
//
// Commands come in three shapes:
//   1. `decide…(…) throws(DomainError) -> AccountEvent` for plain commands (profile, logout,
//      verification, feedback…): journal the event, apply it, reply, push to `recipients`.
//   2. `decide…(…) -> AccountDecision` for commands that burn a code or count a failure (code
//      login, phone change, password login, password change): apply `decision.throttle` first
//      (not journaled), then handle `decision.outcome` like shape 1.
//   3. `decideCodeRequest` returns a `CodeIssue`: apply `.codeIssued(issue)`, then hand the code
//      to the SMS provider.
//
// Password hashing (scrypt, tens of milliseconds) never runs here. Setting a password takes a
// hash the server computed elsewhere; password login and change are a query (`passwordChallenge`)
// that hands out the stored hash, verification on another thread, then a command that carries the
// verdict back. The challenge remembers which hash was checked, so a password changed in between
// cannot be bypassed.
//
// Nothing here reads a clock or a random source of its own: `now` and `generator` are parameters.

/// The outcome of a command that also touches the throttle.
public struct AccountDecision: Sendable, Equatable {
    /// Apply these first, whatever the outcome; never journal them.
    public var throttle: [AccountThrottleEvent]
    /// The event to journal and apply, or the error to reply with.
    public var outcome: Result<AccountEvent, DomainError>

    init(throttle: [AccountThrottleEvent] = [], _ outcome: Result<AccountEvent, DomainError>) {
        self.throttle = throttle
        self.outcome = outcome
    }
}

/// The accounts part, as the server runs it: confined to one serial queue, which calls the
/// decide methods, the queries and both `apply`s in turn. Only the static helpers
/// (`validatePassword`, `SessionToken.make`) may be called from anywhere.
public struct AccountStore: Sendable, Equatable {
    public var policy: AccountPolicy
    public private(set) var state: AccountState
    public private(set) var throttle: AccountThrottle
    /// An administrator whose account another partition holds, which said, for one command, that
    /// they administer: set only on a copy made for that command (`vouching(for:)`), never on the
    /// store the server keeps.
    public private(set) var vouchedAdministrator: UserID?

    /// A store over `state` (empty, or a snapshot to replay the journal tail onto), laid out for
    /// the policy's ids.
    public init(policy: AccountPolicy = AccountPolicy(), state: AccountState = AccountState()) {
        self.policy = policy
        self.state = state.placed(in: policy.userIDs)
        self.throttle = AccountThrottle()
    }

    /// Applies a journaled (or about to be journaled) event.
    public mutating func apply(_ event: AccountEvent) {
        state.apply(event)
    }

    /// Applies an ephemeral throttle event.
    public mutating func apply(_ event: AccountThrottleEvent) {
        throttle.apply(event, policy: policy)
    }

    // MARK: Shared checks

    func account(_ user: UserID) throws(DomainError) -> AccountRecord {
        guard let account = state.record(user) else {
            throw DomainError(.notFound, "No such user.", field: "user")
        }
        return account
    }

    /// This store, for one command of `administrator`, whose account partition (another one)
    /// said they administer.
    public func vouching(for administrator: UserID) -> AccountStore {
        var copy = self
        copy.vouchedAdministrator = administrator
        return copy
    }

    /// True for users granted administration and users whose phone is configured as one, and
    /// for an administrator vouched for.
    public func isAdministrator(_ user: UserID) -> Bool {
        if user == vouchedAdministrator { return true }
        guard let account = state.record(user) else { return false }
        return state.grantedAdministrators.contains(user) || policy.administratorPhones.contains(account.phone)
    }

    func requireAdministrator(_ user: UserID) throws(DomainError) {
        guard isAdministrator(user) else {
            throw DomainError(.forbidden, "Only administrators may do this.")
        }
    }
}
