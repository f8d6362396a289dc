// The durable half of the accounts part: everything rebuilt by replaying `AccountEvent`s.

/// One account.
public struct UserAccount: Codable, Sendable, Equatable {
    public var id: UserID
    public var phone: PhoneNumber
    /// The scrypt record, or nil for accounts that only ever logged in by SMS code.
    public var passwordHash: String?
    public var profile: Profile
    public var verification: RunnerVerification?
    public var registeredAt: Timestamp
    /// Sessions not yet purged, oldest first (revoked and expired ones included).
    public var sessions: [SessionID]

    public init(id: UserID, phone: PhoneNumber, passwordHash: String?, profile: Profile,
                verification: RunnerVerification?, registeredAt: Timestamp, sessions: [SessionID]) {
        self.id = id
        self.phone = phone
        self.passwordHash = passwordHash
        self.profile = profile
        self.verification = verification
        self.registeredAt = registeredAt
        self.sessions = sessions
    }
}

/// Accounts, sessions, administrator grants and feedback. Equal states mean equal histories as
/// far as anyone can observe, which is what the replay tests check.
public struct AccountState: Codable, Sendable, Equatable {
    public private(set) var accounts: [UserID: UserAccount] = [:]
    public private(set) var userByPhone: [PhoneNumber: UserID] = [:]
    public private(set) var sessions: [SessionID: Session] = [:]
    /// Administrators by grant; those by configured phone are in `AccountPolicy`.
    public private(set) var grantedAdministrators: Set<UserID> = []
    /// In id order, so entry `n` has id `n + 1`.
    public private(set) var feedback: [FeedbackEntry] = []
    /// The id the next registration gets. Ids start at 1 and are never reused.
    public private(set) var nextUserID: UInt64 = 1

    public init() {}

    /// The state as a snapshot holds it, taken as it is (as its Codable conformance takes it).
    public init(accounts: [UserID: UserAccount], userByPhone: [PhoneNumber: UserID], sessions: [SessionID: Session],
                grantedAdministrators: Set<UserID>, feedback: [FeedbackEntry], nextUserID: UInt64) {
        self.accounts = accounts
        self.userByPhone = userByPhone
        self.sessions = sessions
        self.grantedAdministrators = grantedAdministrators
        self.feedback = feedback
        self.nextUserID = nextUserID
    }

    /// The only mutation. Events come from decide methods run against this very state (or from
    /// the journal of such), so a mismatch is a broken invariant, not an error.
    public mutating func apply(_ event: AccountEvent) {
        switch event {
        case .registered(let registration):
            guard accounts[registration.user] == nil, userByPhone[registration.phone] == nil else {
                fatalError("internal inconsistency in AccountState: registration of an existing account")
            }
            accounts[registration.user] = UserAccount(
                id: registration.user, phone: registration.phone, passwordHash: nil,
                profile: Profile(nickname: registration.nickname), verification: nil,
                registeredAt: registration.session.issuedAt, sessions: [])
            userByPhone[registration.phone] = registration.user
            nextUserID = max(nextUserID, registration.user.rawValue + 1)
            open(registration.session)
        case .loggedIn(let login):
            open(login.session)
        case .passwordSet(let change):
            modify(change.user) { $0.passwordHash = change.passwordHash }
        case .sessionRevoked(let revocation):
            guard sessions[revocation.session]?.user == revocation.user else {
                fatalError("internal inconsistency in AccountState: revoking an unknown session")
            }
            sessions[revocation.session]?.revokedAt = revocation.at
        case .sessionsPurged(let purge):
            var purgedByUser: [UserID: Set<SessionID>] = [:]
            for id in purge.sessions {
                guard let session = sessions.removeValue(forKey: id) else {
                    fatalError("internal inconsistency in AccountState: purging an unknown session")
                }
                purgedByUser[session.user, default: []].insert(id)
            }
            for (user, purged) in purgedByUser {
                modify(user) { $0.sessions.removeAll(where: purged.contains) }
            }
        case .profileUpdated(let change):
            modify(change.user) { $0.profile.merge(change.update) }
        case .phoneChanged(let change):
            guard userByPhone[change.oldPhone] == change.user, userByPhone[change.newPhone] == nil else {
                fatalError("internal inconsistency in AccountState: phone change collides")
            }
            userByPhone[change.oldPhone] = nil
            userByPhone[change.newPhone] = change.user
            modify(change.user) { $0.phone = change.newPhone }
        case .verificationSubmitted(let submission):
            modify(submission.user) {
                $0.verification = RunnerVerification(
                    status: .pending, realName: submission.realName, studentID: submission.studentID,
                    school: submission.school, submittedAt: submission.at)
            }
        case .verificationDecided(let decision):
            modify(decision.user) {
                guard var verification = $0.verification else {
                    fatalError("internal inconsistency in AccountState: deciding a missing verification")
                }
                verification.status = decision.isApproved ? .approved : .rejected
                verification.decidedAt = decision.at
                verification.decidedBy = decision.administrator
                verification.rejectionReason = decision.reason
                $0.verification = verification
            }
        case .administratorChanged(let change):
            if change.isAdministrator {
                grantedAdministrators.insert(change.user)
            } else {
                grantedAdministrators.remove(change.user)
            }
        case .feedbackSubmitted(let entry):
            guard entry.id == UInt64(feedback.count) + 1 else {
                fatalError("internal inconsistency in AccountState: feedback id out of sequence")
            }
            feedback.append(entry)
        }
    }

    private mutating func open(_ session: Session) {
        guard sessions[session.id] == nil else {
            fatalError("internal inconsistency in AccountState: session id reused")
        }
        sessions[session.id] = session
        modify(session.user) { $0.sessions.append(session.id) }
    }

    private mutating func modify(_ user: UserID, _ change: (inout UserAccount) -> Void) {
        guard accounts[user] != nil else {
            fatalError("internal inconsistency in AccountState: event for unknown user \(user)")
        }
        change(&accounts[user]!)
    }
}
