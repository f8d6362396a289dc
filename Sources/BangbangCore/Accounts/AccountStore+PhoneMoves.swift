// A phone moving to the partition of another pair than its user's account. A login names a phone,
// so what is keyed by the phone lives in the partition the phone hashes to, while the account lives
// in its user's. The phone's partition keeps who holds the phone (a claim, made with the
// change-phone code sent there); the user's own partition then changes the account's phone, and the
// old phone's partition gives up its claim. A login by a claimed phone proves the code (or finds
// the claim) in the phone's partition and opens the session in the user's.
//
// A claim can outlive its reason (a move that stopped half-way); it then only keeps others off
// the phone, never logs anyone in: the user's partition opens a session only for the account's
// own phone. Two ages keep a stale claim's release from racing a move still under way: the
// user's partition takes a claim only within `PhoneClaimAges.takeWithin` of its stamp, and the
// phone's partition releases an unused claim only once it is older than `releasableAfter`.

/// How long a claim is good for the move that made it, and when an unused one may be released.
public enum PhoneClaimAges {
    public static let takeWithin: Int64 = 60_000
    /// Twice the first: a node's clock may be a little off another's.
    public static let releasableAfter: Int64 = 120_000
}

extension AccountStore {
    /// The claim on `phone` in this partition, if a user of another partition holds it.
    public func claim(on phone: PhoneNumber) -> PhoneClaim? { state.phoneClaims[phone] }

    /// The phone of `user`'s account here, nil for no such account.
    public func phone(of user: UserID) -> PhoneNumber? { state.record(user)?.phone }

    /// In the phone's partition: `user` of another partition takes `newPhone`, proven by the code
    /// sent there for `changePhone`. Refused with `phone_taken` when anyone else holds it, as a
    /// change on one node is; made again by the same user (a move tried again), stamped anew.
    public func decidePhoneClaim(user: UserID, newPhone input: String, code: String, now: Timestamp) -> AccountDecision {
        let phone: PhoneNumber
        do throws(DomainError) {
            phone = try PhoneNumber(parsing: input)
            guard !state.idSpace.contains(user.rawValue) else {
                throw DomainError(.invalidField, "user \(user) has an account in this partition: its phone changes there", field: "user")
            }
            try requireHeld(phone, byNobodyBut: user)
        } catch {
            return AccountDecision(.failure(error))
        }
        let check = checkCode(code, phone: phone, purpose: .changePhone, requester: user, now: now)
        if let error = check.error { return AccountDecision(throttle: check.throttle, .failure(error)) }
        return AccountDecision(throttle: check.throttle, .success(.phoneClaimed(.init(phone: phone, user: user, at: now))))
    }

    /// The claim `user` made on `phone` less than `PhoneClaimAges.takeWithin` ago: a move tried
    /// again after its reply was lost goes on with it, its code already used.
    public func freshClaim(on phone: PhoneNumber, by user: UserID, now: Timestamp) -> PhoneClaim? {
        guard let claim = state.phoneClaims[phone], claim.user == user,
              now.rawValue - claim.at.rawValue <= PhoneClaimAges.takeWithin else { return nil }
        return claim
    }

    /// In the user's partition: `user`'s account moves to `newPhone`, which the phone's partition
    /// claimed for it at `claimedAt`. Refused when the claim is too old to be sure it still holds
    /// (`code_expired`: the client asks for a new code and tries again) or the phone is theirs.
    public func decideClaimedPhoneChange(user: UserID, newPhone phone: PhoneNumber, claimedAt: Timestamp,
                                         now: Timestamp) -> AccountDecision {
        let account: AccountRecord
        do throws(DomainError) {
            account = try self.account(user)
            guard now.rawValue - claimedAt.rawValue <= PhoneClaimAges.takeWithin else {
                throw DomainError(.codeExpired, "The change took too long to complete; request a new code and try again.", field: "code")
            }
            try requireFree(phone, for: account)
        } catch {
            return AccountDecision(.failure(error))
        }
        return AccountDecision(.success(.phoneChanged(.init(user: user, oldPhone: account.phone, newPhone: phone, at: now))))
    }

    /// In the phone's partition: the claim of `user` on `phone` given up, if it is still the one
    /// stamped at or before `stampedBy` and, for one found unused (`isUnused`), old enough that
    /// no move can still take it. Nil when there is nothing to release.
    public func decidePhoneRelease(user: UserID, phone: PhoneNumber, stampedBy: Timestamp, isUnused: Bool,
                                   now: Timestamp) -> AccountEvent? {
        guard let claim = state.phoneClaims[phone], claim.user == user, claim.at <= stampedBy else { return nil }
        if isUnused, now.rawValue - claim.at.rawValue < PhoneClaimAges.releasableAfter { return nil }
        return .phoneReleased(.init(phone: phone, user: user, at: now))
    }

    /// In the user's partition: a session for `user`, whose code for `phone` the phone's partition
    /// proved. Nil when the account's phone is not `phone` (the claim there is unused).
    public func decideClaimedCodeLogin(user: UserID, phone: PhoneNumber, device: String?, now: Timestamp,
                                       using generator: inout some RandomNumberGenerator) -> AccountDecision? {
        guard state.record(user)?.phone == phone else { return nil }
        let deviceName: String?
        do {
            deviceName = try Self.validatedDevice(device)
        } catch {
            return AccountDecision(.failure(error))
        }
        let session = makeSession(for: user, device: deviceName, now: now, using: &generator)
        return AccountDecision(.success(.loggedIn(.init(session: session, method: .code))))
    }

    /// In the phone's partition: checks the code a login by a claimed phone typed, as a login
    /// here would (`code_expired`, `code_incorrect`, the code consumed).
    public func proveLoginCode(_ code: String, phone: PhoneNumber, now: Timestamp) -> (throttle: [AccountThrottleEvent], error: DomainError?) {
        checkCode(code, phone: phone, purpose: .login, requester: nil, now: now)
    }

    /// `phone_taken` unless a user of another partition, `requester`, may ask for a code to move
    /// to `phone` of this one.
    func requireClaimable(_ phone: PhoneNumber, by requester: UserID) throws(DomainError) {
        if state.holder(of: phone) == requester {
            throw DomainError(.phoneTaken, "This is already your phone number.", field: "phone")
        }
        try requireHeld(phone, byNobodyBut: nil)
    }
}
