// SMS codes: deciding a send under every rate limit, and checking a code that a user typed.
import Crypto

extension AccountStore {
    /// Decides whether to send a fresh code to `phone` for `purpose`. On success apply
    /// `.codeIssued(issue)` and send `issue.code` to `issue.phone`; a new code replaces any
    /// pending one for the same phone and purpose.
    ///
    /// - `requester`: the logged-in user, required for `changePhone` (the new phone must be free
    ///   and not already theirs); ignored for `login`.
    /// - `clientIP`: the address the request came from, for the per-IP limit.
    public func decideCodeRequest(phone input: String, purpose: CodePurpose, requester: UserID?,
                                  clientIP: String, now: Timestamp,
                                  using generator: inout some RandomNumberGenerator) throws(DomainError) -> CodeIssue {
        // In the order of protocol/README.md, "Error precedence": the login a purpose needs,
        // the fields, the state (a phone taken), and only then the SMS limits, so a request
        // refused on its merits never uses up a send.
        if purpose == .changePhone && requester == nil {
            throw DomainError(.unauthenticated, "Log in before changing your phone number.")
        }
        let phone = try PhoneNumber(parsing: input)
        var boundRequester: UserID?
        if purpose == .changePhone, let requester {
            if state.idSpace.contains(requester.rawValue) {
                try requireFree(phone, for: try account(requester))
            } else {
                try requireClaimable(phone, by: requester)
            }
            boundRequester = requester
        }
        try checkSendLimits(phone: phone, clientIP: clientIP, now: now)
        let number = UInt32.random(in: 0..<1_000_000, using: &generator)
        let digits = String(number)
        return CodeIssue(phone: phone, purpose: purpose,
                         code: String(repeating: "0", count: 6 - digits.count) + digits,
                         issuedAt: now,
                         expiresAt: now.adding(milliseconds: AccountPolicy.milliseconds(policy.codeLifetime)),
                         requester: boundRequester, clientIP: clientIP)
    }

    /// The three SMS limits. The 60 s spacing and the daily count are per phone whatever the
    /// purpose, so a login code and a change-phone code to one number share them. Each refusal
    /// says when that limit would let a send through.
    private func checkSendLimits(phone: PhoneNumber, clientIP: String, now: Timestamp) throws(DomainError) {
        let phoneSends = throttle.sendTimes(for: phone)
        if let last = phoneSends?.last {
            let nextAllowed = last.adding(milliseconds: AccountPolicy.milliseconds(policy.codeResendInterval))
            if now < nextAllowed {
                let wait = nextAllowed.rawValue - now.rawValue
                throw DomainError.rateLimited("A code was just sent to this phone; try again in \((wait + 999) / 1000) s.",
                                              retryAfterMilliseconds: wait)
            }
        }
        if let wait = Self.wait(phoneSends, limit: policy.codeDailyLimitPerPhone,
                                window: AccountPolicy.milliseconds(policy.codeDailyWindow), now: now) {
            throw DomainError.rateLimited("Too many codes sent to this phone today; try again tomorrow.",
                                          retryAfterMilliseconds: wait)
        }
        if let wait = Self.wait(throttle.sendTimes(forIP: clientIP), limit: policy.codeLimitPerIP,
                                window: AccountPolicy.milliseconds(policy.codeIPWindow), now: now) {
            throw DomainError.rateLimited("Too many codes requested from this network; try again later.",
                                          retryAfterMilliseconds: wait)
        }
    }

    /// With `times` (oldest first) counted over a rolling `window`: nil while fewer than `limit`
    /// fall in the window ending at `now`, else the milliseconds until the oldest of the last
    /// `limit` leaves it.
    private static func wait(_ times: SendTimes?, limit: Int, window: Int64, now: Timestamp) -> Int64? {
        guard let times else { return nil }
        let start = now.adding(milliseconds: -window)
        let recent = count(times, after: start)
        guard recent >= limit else { return nil }
        let oldestThatCounts = times[times.count - limit]
        return oldestThatCounts.rawValue + window - now.rawValue
    }

    private static func count(_ times: SendTimes, after start: Timestamp) -> Int {
        var count = 0
        for time in times.reversed() {
            guard time > start else { break }
            count += 1
        }
        return count
    }

    /// Checks `code` against the pending code. Returns the throttle events to apply (a consumed
    /// code, or one more wrong try) and the error, if any.
    func checkCode(_ code: String, phone: PhoneNumber, purpose: CodePurpose, requester: UserID?,
                   now: Timestamp) -> (throttle: [AccountThrottleEvent], error: DomainError?) {
        // Anything longer than a code is a wrong code; bound the comparison's copy.
        let typed = Array(code.utf8.prefix(16))
        guard let pending = throttle.pendingCode(for: phone, purpose: purpose),
              pending.requester == requester else {
            return ([], DomainError(.codeExpired, "No valid code for this phone; request a new one.", field: "code"))
        }
        guard now < pending.expiresAt else {
            return ([.codeConsumed(phone: phone, purpose: purpose)],
                    DomainError(.codeExpired, "The code has expired; request a new one.", field: "code"))
        }
        guard Digest.constantTimeEquals(typed, Array(pending.code.utf8)) else {
            let remaining = policy.codeMaxWrongAttempts - pending.wrongAttempts - 1
            let message = remaining > 0 ? "Wrong code; \(remaining) tries left."
                : "Wrong code too many times; request a new one."
            return ([.codeAttemptFailed(phone: phone, purpose: purpose)],
                    DomainError(.codeIncorrect, message, field: "code"))
        }
        return ([.codeConsumed(phone: phone, purpose: purpose)], nil)
    }

    /// Throws `phone_taken` when `phone` belongs to any account, including `account` itself.
    func requireFree(_ phone: PhoneNumber, for account: AccountRecord) throws(DomainError) {
        if account.phone == phone {
            throw DomainError(.phoneTaken, "This is already your phone number.", field: "phone")
        }
        try requireHeld(phone, byNobodyBut: nil)
    }

    /// `phone_taken` when anyone but `user` holds `phone` here (an account's phone, or a claim).
    func requireHeld(_ phone: PhoneNumber, byNobodyBut user: UserID?) throws(DomainError) {
        if let holder = state.holder(of: phone), holder != user {
            throw DomainError(.phoneTaken, "This phone number belongs to another account.", field: "phone")
        }
    }
}
