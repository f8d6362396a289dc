// The ephemeral half of the accounts part: pending SMS codes and the counters behind every rate
// limit (code sends per phone and per IP, wrong passwords per phone).
//
// None of this is journaled, on purpose. A pending code is a five-minute secret that should not
// sit in a journal on disk; a counter only slows attackers down. After a restart the codes are
// gone (users tap "send code" again) and the limits start afresh, which at worst lets one more
// burst through. What a user was told succeeded (an account, a session, a changed phone) is
// always an `AccountEvent` and durable. The throttle is still changed only through
// `AccountThrottleEvent`s, so the decide/apply discipline and determinism hold in tests.
//
// A phone's send times must be kept for a day after a code is used (the 60 s spacing and the
// daily count are per phone, whoever used the code), so every user who logged in by SMS code
// today has an entry; `SendTimes` keeps the usual single time inline.

/// What an SMS code is for; a code for one purpose never works for the other.
public enum CodePurpose: String, Codable, Sendable, CaseIterable {
    case login
    case changePhone = "change_phone"
}

/// A decided SMS send: apply it as `.codeIssued`, then give `code` to the SMS provider for
/// `phone`, and tell the client `expiresAt`.
public struct CodeIssue: Codable, Sendable, Equatable {
    public var phone: PhoneNumber
    public var purpose: CodePurpose
    /// Six ASCII digits.
    public var code: String
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    /// The logged-in user who asked, for `changePhone`; the code works only for them.
    public var requester: UserID?
    public var clientIP: String
}

/// A change to the throttle. Applied, never journaled.
public enum AccountThrottleEvent: Codable, Sendable, Equatable {
    case codeIssued(CodeIssue)
    case codeAttemptFailed(phone: PhoneNumber, purpose: CodePurpose)
    case codeConsumed(phone: PhoneNumber, purpose: CodePurpose)
    case passwordFailed(phone: PhoneNumber, at: Timestamp)
    case passwordSucceeded(phone: PhoneNumber)
}

/// Pending codes and rate counters; see the comment at the top of this file.
public struct AccountThrottle: Sendable, Equatable {
    struct CodeKey: Hashable {
        var phone: PhoneNumber
        var purpose: CodePurpose
    }

    struct PendingCode: Equatable {
        var code: String
        var expiresAt: Timestamp
        var wrongAttempts: Int
        var requester: UserID?
    }

    struct PasswordFailures: Equatable {
        var count: Int
        var lastFailureAt: Timestamp
    }

    var pendingCodes: [CodeKey: PendingCode] = [:]
    /// Send times within the daily window, oldest first; the last one drives the resend spacing.
    var sendsByPhone: [PhoneNumber: SendTimes] = [:]
    var sendsByIP: [String: SendTimes] = [:]
    var passwordFailures: [PhoneNumber: PasswordFailures] = [:]
    /// Sends since the last sweep of stale entries; sweeping every so often keeps memory bounded
    /// by recent activity without paying a full scan per send.
    var sendsSinceSweep = 0
    static let sweepInterval = 1024

    public init() {}

    // MARK: Queries

    func sendTimes(for phone: PhoneNumber) -> SendTimes? { sendsByPhone[phone] }
    func sendTimes(forIP address: String) -> SendTimes? { sendsByIP[address] }
    func pendingCode(for phone: PhoneNumber, purpose: CodePurpose) -> PendingCode? {
        pendingCodes[CodeKey(phone: phone, purpose: purpose)]
    }

    /// When password login for `phone` unlocks, if it is locked at `now`.
    func passwordLockedUntil(_ phone: PhoneNumber, now: Timestamp, policy: AccountPolicy) -> Timestamp? {
        guard let failures = passwordFailures[phone], failures.count >= policy.passwordFailureLimit else { return nil }
        let until = failures.lastFailureAt.adding(milliseconds: AccountPolicy.milliseconds(policy.passwordLockout))
        return now < until ? until : nil
    }

    // MARK: Apply

    mutating func apply(_ event: AccountThrottleEvent, policy: AccountPolicy) {
        switch event {
        case .codeIssued(let issue):
            pendingCodes[CodeKey(phone: issue.phone, purpose: issue.purpose)] =
                PendingCode(code: issue.code, expiresAt: issue.expiresAt, wrongAttempts: 0, requester: issue.requester)
            let dayStart = issue.issuedAt.adding(milliseconds: -AccountPolicy.milliseconds(policy.codeDailyWindow))
            let hourStart = issue.issuedAt.adding(milliseconds: -AccountPolicy.milliseconds(policy.codeIPWindow))
            Self.record(issue.issuedAt, after: dayStart, in: &sendsByPhone[issue.phone])
            if policy.codeLimitPerIP < Int.max {
                Self.record(issue.issuedAt, after: hourStart, in: &sendsByIP[issue.clientIP])
            }
            sendsSinceSweep += 1
            if sendsSinceSweep >= Self.sweepInterval { sweep(now: issue.issuedAt, policy: policy) }
        case .codeAttemptFailed(let phone, let purpose):
            let key = CodeKey(phone: phone, purpose: purpose)
            guard var pending = pendingCodes[key] else { return }
            pending.wrongAttempts += 1
            pendingCodes[key] = pending.wrongAttempts >= policy.codeMaxWrongAttempts ? nil : pending
        case .codeConsumed(let phone, let purpose):
            pendingCodes[CodeKey(phone: phone, purpose: purpose)] = nil
        case .passwordFailed(let phone, let at):
            let lockout = AccountPolicy.milliseconds(policy.passwordLockout)
            if var failures = passwordFailures[phone], at < failures.lastFailureAt.adding(milliseconds: lockout) {
                failures.count += 1
                failures.lastFailureAt = at
                passwordFailures[phone] = failures
            } else {
                passwordFailures[phone] = PasswordFailures(count: 1, lastFailureAt: at)
            }
        case .passwordSucceeded(let phone):
            passwordFailures[phone] = nil
        }
    }

    private static func record(_ time: Timestamp, after windowStart: Timestamp, in times: inout SendTimes?) {
        if times == nil {
            times = SendTimes(time)
        } else {
            times!.record(time, after: windowStart)
        }
    }

    /// Drops expired codes, counters older than their windows and finished lockouts.
    private mutating func sweep(now: Timestamp, policy: AccountPolicy) {
        sendsSinceSweep = 0
        let dayStart = now.adding(milliseconds: -AccountPolicy.milliseconds(policy.codeDailyWindow))
        let hourStart = now.adding(milliseconds: -AccountPolicy.milliseconds(policy.codeIPWindow))
        let lockout = AccountPolicy.milliseconds(policy.passwordLockout)
        pendingCodes = pendingCodes.filter { $0.value.expiresAt > now }
        sendsByPhone = sendsByPhone.filter { $0.value.latest > dayStart }
        sendsByIP = sendsByIP.filter { $0.value.latest > hourStart }
        passwordFailures = passwordFailures.filter { $0.value.lastFailureAt.adding(milliseconds: lockout) > now }
    }
}

/// The times codes were sent to one phone (or from one address) that still count, oldest first.
/// Most phones are sent one code and then log in, so the newest time is kept inline and only
/// the earlier ones, if any, in an array.
struct SendTimes: RandomAccessCollection, Sendable, Equatable {
    private(set) var latest: Timestamp
    private var earlier: [Timestamp] = []

    init(_ time: Timestamp) { latest = time }

    var startIndex: Int { 0 }
    var endIndex: Int { earlier.count + 1 }
    subscript(position: Int) -> Timestamp { position == earlier.count ? latest : earlier[position] }

    /// Adds `time` as the newest and forgets the oldest times up to the first one after
    /// `windowStart`.
    mutating func record(_ time: Timestamp, after windowStart: Timestamp) {
        earlier.append(latest)
        latest = time
        let stale = earlier.prefix { $0 <= windowStart }.count
        if stale == earlier.count {
            earlier = []
        } else if stale > 0 {
            earlier.removeFirst(stale)
        }
    }
}
