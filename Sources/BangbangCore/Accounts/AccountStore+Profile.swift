// Personal centre: profile edits and changing the bound phone.

extension AccountStore {
    /// A partial profile edit; every present field is validated (see `ProfileLimits`) and stored
    /// trimmed, "" clears an optional field.
    public func decideProfileUpdate(user: UserID, update: ProfileUpdate, now: Timestamp) throws(DomainError) -> AccountEvent {
        let normalized = try update.validated(campuses: policy.campuses)
        _ = try account(user)
        return .profileUpdated(.init(user: user, update: normalized, at: now))
    }

    /// Moves `user` to `newPhone`, proven by the code sent there for `changePhone`. The phone
    /// must belong to no account (`phone_taken`); the check is repeated here because another
    /// account may have taken it since the code was sent.
    public func decidePhoneChange(user: UserID, newPhone input: String, code: String, now: Timestamp) -> AccountDecision {
        let account: AccountRecord
        let phone: PhoneNumber
        do {
            phone = try PhoneNumber(parsing: input)
            account = try self.account(user)
            try requireFree(phone, for: account)
        } catch {
            return AccountDecision(.failure(error))
        }
        let check = checkCode(code, phone: phone, purpose: .changePhone, requester: user, now: now)
        if let error = check.error { return AccountDecision(throttle: check.throttle, .failure(error)) }
        return AccountDecision(throttle: check.throttle,
                               .success(.phoneChanged(.init(user: user, oldPhone: account.phone, newPhone: phone, at: now))))
    }
}
