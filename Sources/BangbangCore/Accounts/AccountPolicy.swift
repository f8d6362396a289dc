// The limits and deployment settings of the accounts part, in one documented value.

/// Every tunable of the accounts part. The server builds one from its configuration and hands it
/// to `AccountStore`; it is not part of the journaled state, so a restart with a new policy
/// applies the new limits to old accounts.
public struct AccountPolicy: Sendable, Equatable {
    /// How long an SMS code stays usable. Five minutes is what users expect from Chinese SMS
    /// logins: long enough for a slow SMS gateway, short enough that a leaked code soon dies.
    public var codeLifetime: Duration
    /// Wrong entries a code survives. After the fifth wrong try the code is dead: a six-digit
    /// code then offers an attacker at most 5 in 1,000,000 per send.
    public var codeMaxWrongAttempts: Int
    /// Minimum spacing between two sends to the same phone (any purpose). Sixty seconds matches
    /// the countdown on the app's "send code" button and what SMS gateways enforce themselves.
    public var codeResendInterval: Duration
    /// Sends to one phone per rolling `codeDailyWindow`. Ten keeps a forgetful user working while
    /// stopping anyone from using us to flood a stranger's phone.
    public var codeDailyLimitPerPhone: Int
    /// The window of `codeDailyLimitPerPhone`: a rolling 24 hours rather than a calendar day, so
    /// there is no midnight burst.
    public var codeDailyWindow: Duration
    /// Sends requested from one client IP per `codeIPWindow`. Twenty per hour lets a campus
    /// NAT (many students behind one address) log in, but caps SMS-pumping fraud from one host.
    /// `Int.max` is no limit: no count can reach it, so sends are not counted per IP at all.
    public var codeLimitPerIP: Int
    /// The window of `codeLimitPerIP`.
    public var codeIPWindow: Duration
    /// Consecutive wrong passwords for one phone before password login is locked. Five forgives
    /// typos; the lock stops online guessing.
    public var passwordFailureLimit: Int
    /// How long a password lock lasts after the last failure. Fifteen minutes is brief for a user
    /// (who can still log in by SMS code) and slow for a guesser.
    public var passwordLockout: Duration
    /// Lifetime of a session from login. Thirty days: a phone app should not ask for a code
    /// every week, and a lost phone's session still dies within a month (or at logout).
    public var sessionLifetime: Duration
    /// The campuses (schools) of this deployment. When non-empty, a profile's campus and a
    /// runner's school must be one of these exact names; when empty, any short name is accepted.
    public var campuses: [String]
    /// Phones whose accounts are administrators by configuration. They cannot be revoked through
    /// the app, so a deployment can never lock itself out of administration.
    public var administratorPhones: Set<PhoneNumber>
    /// Largest page of an administrator listing; bounds the work one request can cause.
    public var maximumPageSize: Int
    /// The ids this account partition gives new users: every id on one partition (a single
    /// node); on partition `n` of `P`, those congruent to `n` mod `P` (IDSpace.swift).
    public var userIDs: IDSpace = .all

    public init(codeLifetime: Duration = .seconds(5 * 60),
                codeMaxWrongAttempts: Int = 5,
                codeResendInterval: Duration = .seconds(60),
                codeDailyLimitPerPhone: Int = 10,
                codeDailyWindow: Duration = .seconds(24 * 60 * 60),
                codeLimitPerIP: Int = 20,
                codeIPWindow: Duration = .seconds(60 * 60),
                passwordFailureLimit: Int = 5,
                passwordLockout: Duration = .seconds(15 * 60),
                sessionLifetime: Duration = .seconds(30 * 24 * 60 * 60),
                campuses: [String] = [],
                administratorPhones: Set<PhoneNumber> = [],
                maximumPageSize: Int = 100) {
        precondition(codeMaxWrongAttempts > 0 && codeDailyLimitPerPhone > 0 && codeLimitPerIP > 0
                     && passwordFailureLimit > 0 && maximumPageSize > 0, "account limits must be positive")
        self.codeLifetime = codeLifetime
        self.codeMaxWrongAttempts = codeMaxWrongAttempts
        self.codeResendInterval = codeResendInterval
        self.codeDailyLimitPerPhone = codeDailyLimitPerPhone
        self.codeDailyWindow = codeDailyWindow
        self.codeLimitPerIP = codeLimitPerIP
        self.codeIPWindow = codeIPWindow
        self.passwordFailureLimit = passwordFailureLimit
        self.passwordLockout = passwordLockout
        self.sessionLifetime = sessionLifetime
        self.campuses = campuses
        self.administratorPhones = administratorPhones
        self.maximumPageSize = maximumPageSize
    }

    /// Whole milliseconds of `duration`, the unit of `Timestamp`.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
