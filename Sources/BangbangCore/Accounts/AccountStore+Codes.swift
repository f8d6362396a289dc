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
        let phone = try PhoneNumber(parsing: input)
        var boundRequester: UserID?
        if purpose == .changePhone {
            guard let requester else {
                throw DomainError(.unauthenticated, "Log in before changing your phone number.")
            }
            let account = try account(requester)
            try requireFree(phone, for: account)
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

    private func checkSendLimits(phone: PhoneNumber, clientIP: String, now: Timestamp) throws(DomainError) {
        let phoneSends = throttle.sendTimes(for: phone)
        if let last = phoneSends.last {
            let nextAllowed = last.adding(milliseconds: AccountPolicy.milliseconds(policy.codeResendInterval))
            if now < nextAllowed {
                let seconds = (nextAllowed.rawValue - now.rawValue + 999) / 1000
                throw DomainError(.rateLimited, "A code was just sent; try again in \(seconds) s.")
            }
        }
        let dayStart = now.adding(milliseconds: -AccountPolicy.milliseconds(policy.codeDailyWindow))
        if Self.count(phoneSends, after: dayStart) >= policy.codeDailyLimitPerPhone {
            throw DomainError(.rateLimited, "Too many codes sent to this phone today; try again tomorrow.")
        }
        let hourStart = now.adding(milliseconds: -AccountPolicy.milliseconds(policy.codeIPWindow))
        if Self.count(throttle.sendTimes(forIP: clientIP), after: hourStart) >= policy.codeLimitPerIP {
            throw DomainError(.rateLimited, "Too many codes requested from this network; try again later.")
        }
    }

    private static func count(_ times: [Timestamp], after start: Timestamp) -> Int {
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
    func requireFree(_ phone: PhoneNumber, for account: UserAccount) throws(DomainError) {
        if account.phone == phone {
            throw DomainError(.phoneTaken, "This is already your phone number.", field: "phone")
        }
        if state.userByPhone[phone] != nil {
            throw DomainError(.phoneTaken, "This phone number belongs to another account.", field: "phone")
        }
    }
}
