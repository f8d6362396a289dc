// Logging in (SMS code or password) and managing passwords.

/// What the server needs to verify a password off the store's queue, and what it must hand back.
public struct PasswordChallenge: Sendable, Equatable {
    public var phone: PhoneNumber
    /// Nil when no account has this phone.
    public var user: UserID?
    /// The scrypt record to verify against. Nil when there is no account or no password: the
    /// server must then verify against a decoy hash anyway, so timing reveals nothing, and
    /// report a mismatch.
    public var passwordHash: String?
}

/// The password rules, checked on the plain password before the server hashes it.
public enum PasswordRules {
    /// Eight is the floor NIST SP 800-63B sets for user-chosen secrets; 128 bounds hashing work
    /// while allowing any passphrase.
    public static let length = 8...128
}

extension AccountStore {
    // MARK: Code login

    /// Logs in with a code sent for `login`; an unknown phone is registered on the spot.
    public func decideCodeLogin(phone input: String, code: String, device: String?, now: Timestamp,
                                using generator: inout some RandomNumberGenerator) -> AccountDecision {
        let phone: PhoneNumber
        let deviceName: String?
        do {
            phone = try PhoneNumber(parsing: input)
            deviceName = try Self.validatedDevice(device)
        } catch {
            return AccountDecision(.failure(error))
        }
        let check = checkCode(code, phone: phone, purpose: .login, requester: nil, now: now)
        if let error = check.error { return AccountDecision(throttle: check.throttle, .failure(error)) }
        if let user = state.userByPhone[phone] {
            let session = makeSession(for: user, device: deviceName, now: now, using: &generator)
            return AccountDecision(throttle: check.throttle, .success(.loggedIn(.init(session: session, method: .code))))
        }
        guard state.phoneClaims[phone] == nil else {
            // A user of another partition holds it: the login goes on there (AccountStore+PhoneMoves.swift).
            return AccountDecision(throttle: check.throttle, .failure(DomainError(.invalidField,
                "this phone belongs to an account of another partition", field: "phone")))
        }
        let user = state.nextRegisteredID
        let session = makeSession(for: user, device: deviceName, now: now, using: &generator)
        let registration = AccountEvent.Registration(user: user, phone: phone,
                                                     nickname: Profile.defaultNickname(for: user), session: session)
        return AccountDecision(throttle: check.throttle, .success(.registered(registration)))
    }

    // MARK: Password login

    /// Step one of password login: what to verify. Throws `invalid_field` for a malformed phone
    /// and `rate_limited` while the phone is locked after too many failures; an unknown phone is
    /// not an error here (see `PasswordChallenge.passwordHash`).
    public func passwordChallenge(phone input: String, now: Timestamp) throws(DomainError) -> PasswordChallenge {
        let phone = try PhoneNumber(parsing: input)
        try requireUnlocked(phone, now: now)
        let user = state.userByPhone[phone]
        return PasswordChallenge(phone: phone, user: user, passwordHash: user.flatMap { state.record($0)?.passwordHash })
    }

    /// Step two: the server verified the password of `challenge` and reports whether it matched.
    /// A mismatch, an unknown phone and an account without a password all answer
    /// `invalid_credentials` and count a failure against the phone.
    public func decidePasswordLogin(_ challenge: PasswordChallenge, passwordMatches: Bool, device: String?,
                                    now: Timestamp, using generator: inout some RandomNumberGenerator) -> AccountDecision {
        let deviceName: String?
        do {
            deviceName = try Self.validatedDevice(device)
            try requireUnlocked(challenge.phone, now: now)
        } catch {
            return AccountDecision(.failure(error))
        }
        guard passwordMatches, let user = challenge.user, let hash = challenge.passwordHash,
              state.record(user)?.passwordHash == hash, state.userByPhone[challenge.phone] == user
        else {
            return AccountDecision(throttle: [.passwordFailed(phone: challenge.phone, at: now)],
                                   .failure(Self.invalidCredentials))
        }
        let session = makeSession(for: user, device: deviceName, now: now, using: &generator)
        return AccountDecision(throttle: [.passwordSucceeded(phone: challenge.phone)],
                               .success(.loggedIn(.init(session: session, method: .password))))
    }

    // MARK: Passwords

    /// Checks a new plain password against `PasswordRules` before the server spends time hashing it.
    public static func validatePassword(_ password: String, field: String = "password") throws(DomainError) {
        // Bytes bound the Character walk; 4 bytes per scalar and a few scalars per Character suffice.
        guard password.utf8.count <= PasswordRules.length.upperBound * 16,
              PasswordRules.length.contains(password.count) else {
            throw DomainError(.invalidField, "A password has \(PasswordRules.length.lowerBound) to "
                              + "\(PasswordRules.length.upperBound) characters.", field: field,
                              minimum: Int64(PasswordRules.length.lowerBound), maximum: Int64(PasswordRules.length.upperBound))
        }
    }

    /// Sets the first password of a logged-in user. `passwordHash` is the server's scrypt record
    /// of a password that passed `validatePassword`.
    public func decideSetPassword(user: UserID, passwordHash: String, now: Timestamp) throws(DomainError) -> AccountEvent {
        precondition(!passwordHash.isEmpty, "set password needs a computed hash")
        let account = try account(user)
        guard account.passwordHash == nil else {
            throw DomainError(.passwordAlreadySet, "You already have a password; change it instead.")
        }
        return .passwordSet(.init(user: user, passwordHash: passwordHash, isChange: false, at: now))
    }

    /// Step one of a password change: the hash the old password must match.
    public func passwordChangeChallenge(user: UserID, now: Timestamp) throws(DomainError) -> PasswordChallenge {
        let account = try account(user)
        guard let hash = account.passwordHash else {
            throw DomainError(.passwordNotSet, "You have no password yet; set one first.")
        }
        try requireUnlocked(account.phone, now: now)
        return PasswordChallenge(phone: account.phone, user: user, passwordHash: hash)
    }

    /// Step two: the server verified the old password and hashed the new one. A wrong old
    /// password counts as a failed password login for the phone.
    public func decideChangePassword(_ challenge: PasswordChallenge, oldPasswordMatches: Bool,
                                     newPasswordHash: String, now: Timestamp) -> AccountDecision {
        precondition(!newPasswordHash.isEmpty, "change password needs a computed hash")
        guard let user = challenge.user, let account = state.record(user) else {
            return AccountDecision(.failure(DomainError(.notFound, "No such user.", field: "user")))
        }
        do {
            try requireUnlocked(account.phone, now: now)
        } catch {
            return AccountDecision(.failure(error))
        }
        guard oldPasswordMatches, let hash = challenge.passwordHash, account.passwordHash == hash else {
            return AccountDecision(throttle: [.passwordFailed(phone: account.phone, at: now)],
                                   .failure(DomainError(.invalidCredentials, "The current password is wrong.",
                                                        field: "old_password")))
        }
        return AccountDecision(throttle: [.passwordSucceeded(phone: account.phone)],
                               .success(.passwordSet(.init(user: user, passwordHash: newPasswordHash,
                                                           isChange: true, at: now))))
    }

    // MARK: Helpers

    static let invalidCredentials = DomainError(.invalidCredentials, "Wrong phone number or password.")

    private func requireUnlocked(_ phone: PhoneNumber, now: Timestamp) throws(DomainError) {
        if let until = throttle.passwordLockedUntil(phone, now: now, policy: policy) {
            let wait = until.rawValue - now.rawValue
            throw DomainError.rateLimited("Too many wrong passwords; try again in \((wait + 59_999) / 60_000) min "
                                          + "or log in by SMS code.", retryAfterMilliseconds: wait)
        }
    }

    /// Device names longer than this are cut off in any list anyway.
    static let maximumDeviceNameLength = 64

    /// The `device` of a login, trimmed; nil when not given or empty.
    public static func validatedDevice(_ device: String?) throws(DomainError) -> String? {
        guard let device else { return nil }
        let name = try AccountText.validated(device, field: "device", label: "Device name",
                                             length: 0...maximumDeviceNameLength)
        return name.isEmpty ? nil : name
    }

    func makeSession(for user: UserID, device: String?, now: Timestamp,
                     using generator: inout some RandomNumberGenerator) -> Session {
        var id = SessionID(using: &generator)
        while state.record(user)?.sessionIndex(id) != nil { id = SessionID(using: &generator) }
        return Session(id: id, user: user, device: device, issuedAt: now,
                       expiresAt: now.adding(milliseconds: AccountPolicy.milliseconds(policy.sessionLifetime)))
    }
}
