// What one user may see of another.

/// A user as shown to a viewer. The phone number and real name are filled in only for the user
/// themself and for administrators; everyone else sees the public profile.
public struct UserView: Codable, Sendable, Equatable {
    public var id: UserID
    public var profile: Profile
    public var isVerifiedRunner: Bool
    public var registeredAt: Timestamp
    /// Self and administrators only.
    public var phone: PhoneNumber?
    /// Self and administrators only: the latest verification with real name and student id.
    public var verification: RunnerVerification?
    /// Self and administrators only.
    public var isAdministrator: Bool?
    public var hasPassword: Bool?

    init(account: UserAccount, isFull: Bool, isAdministrator: Bool) {
        self.init(account.id, AccountRecord(account, sessions: []), isFull: isFull, isAdministrator: isAdministrator)
    }

    init(_ user: UserID, _ account: AccountRecord, isFull: Bool, isAdministrator: Bool) {
        id = user
        profile = account.profile
        isVerifiedRunner = account.verification?.status == .approved
        registeredAt = account.registeredAt
        if isFull {
            phone = account.phone
            verification = account.verification
            self.isAdministrator = isAdministrator
            hasPassword = account.passwordHash != nil
        }
    }
}

extension AccountStore {
    /// `user` as `viewer` may see them (viewer nil: not logged in, public view).
    public func user(_ user: UserID, viewer: UserID?) throws(DomainError) -> UserView {
        let account = try account(user)
        let isFull = viewer.map { $0 == user || isAdministrator($0) } ?? false
        return UserView(user, account, isFull: isFull, isAdministrator: isAdministrator(user))
    }
}
