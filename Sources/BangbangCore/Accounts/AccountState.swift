// The durable half of the accounts part: everything rebuilt by replaying `AccountEvent`s.
//
// Accounts are kept as compact records with their sessions inside (AccountRecord.swift), in
// pages indexed by user id (AccountTable.swift); what the state shows of them (`accounts`,
// `sessions`) and what a snapshot stores (the Codable form, unchanged: accounts by id, phones,
// sessions by id, grants, feedback, the next id) are built from the records on demand, one
// account or session at a time.

/// One account, as it is stored in a snapshot and shown to the domain's callers.
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
    public private(set) var accounts = AccountTable()
    public private(set) var userByPhone: [PhoneNumber: UserID] = [:]
    /// Phones of this partition held by users whose accounts live in another (`phoneClaimed`);
    /// empty but on a cluster of several pairs whose users moved their phones across them.
    public private(set) var phoneClaims: [PhoneNumber: PhoneClaim] = [:]
    /// Administrators by grant; those by configured phone are in `AccountPolicy`.
    public private(set) var grantedAdministrators: Set<UserID> = []
    /// In id order, so entry `n` has id `n + 1`.
    public private(set) var feedback: [FeedbackEntry] = []
    /// Where the next registration's id is looked for: it gets the first id of `idSpace` from
    /// here. Ids start at 1 and are never reused.
    public private(set) var nextUserID: UInt64 = 1

    /// The ids this state's account partition hands out (every id but on a partition of many).
    /// A setting of the deployment (`AccountPolicy.userIDs`), not stored: a snapshot is read with
    /// every id's and placed in its partition's (`placed(in:)`).
    public var idSpace: IDSpace { accounts.space }

    /// The id the next registration gets.
    public var nextRegisteredID: UserID { UserID(rawValue: idSpace.firstID(atLeast: nextUserID)) }

    /// Who holds `phone` here: an account's phone, or a claim by a user of another partition.
    public func holder(of phone: PhoneNumber) -> UserID? { userByPhone[phone] ?? phoneClaims[phone]?.user }

    /// Every session, each kept with its user's account.
    public var sessions: SessionTable { SessionTable(accounts: accounts) }

    /// The compact record of `user`'s account, for the store's own reads.
    func record(_ user: UserID) -> AccountRecord? { accounts.record(user) }

    public init() {}

    /// The state as a snapshot holds it. An account's sessions are those its list names, in its
    /// order, whose session names it as their user: always all of them in a state that `apply`
    /// built, and all that `activeSessions` ever showed in any other.
    public init(accounts: [UserID: UserAccount], userByPhone: [PhoneNumber: UserID], sessions: [SessionID: Session],
                grantedAdministrators: Set<UserID>, feedback: [FeedbackEntry], nextUserID: UInt64,
                phoneClaims: [PhoneNumber: PhoneClaim] = [:]) {
        var table = AccountTable(expecting: accounts.keys)
        for (id, account) in accounts {
            var kept = SmallList<SessionRecord>()
            for sessionID in account.sessions {
                guard let session = sessions[sessionID], session.user == id else { continue }
                kept.append(SessionRecord(session))
            }
            table.insert(AccountRecord(account, sessions: kept), for: id)
        }
        self.accounts = table
        self.userByPhone = userByPhone
        self.grantedAdministrators = grantedAdministrators
        self.feedback = feedback
        self.nextUserID = nextUserID
        self.phoneClaims = phoneClaims
    }

    /// The same state with its accounts laid out for `space`: a snapshot is read with every id's
    /// layout, and the partition that recovers it places it in its own.
    public func placed(in space: IDSpace) -> AccountState {
        guard space != idSpace else { return self }
        var table = AccountTable(expecting: Array(accounts.keys), space: space)
        for (user, record) in accounts.records { table.insert(record, for: user) }
        var placed = self
        placed.accounts = table
        return placed
    }

    /// The only mutation. Events come from decide methods run against this very state (or from
    /// the journal of such), so a mismatch is a broken invariant, not an error.
    public mutating func apply(_ event: AccountEvent) {
        switch event {
        case .registered(let registration):
            guard accounts.record(registration.user) == nil, userByPhone[registration.phone] == nil,
                  phoneClaims[registration.phone] == nil else {
                fatalError("internal inconsistency in AccountState: registration of an existing account")
            }
            accounts.insert(AccountRecord(phone: registration.phone, nickname: registration.nickname,
                                          registeredAt: registration.session.issuedAt, sessions: []),
                            for: registration.user)
            userByPhone[registration.phone] = registration.user
            nextUserID = max(nextUserID, registration.user.rawValue + 1)
            open(registration.session)
        case .loggedIn(let login):
            open(login.session)
        case .passwordSet(let change):
            modify(change.user) { $0.passwordHash = change.passwordHash }
        case .sessionRevoked(let revocation):
            guard let index = accounts.record(revocation.user)?.sessionIndex(revocation.session) else {
                fatalError("internal inconsistency in AccountState: revoking an unknown session")
            }
            modify(revocation.user) { $0.sessions[index].revokedAt = revocation.at }
        case .sessionsPurged(let purge):
            purgeSessions(purge.sessions)
        case .profileUpdated(let change):
            modify(change.user) { $0.profile.merge(change.update) }
        case .phoneChanged(let change):
            guard userByPhone[change.oldPhone] == change.user, userByPhone[change.newPhone] == nil,
                  phoneClaims[change.newPhone] == nil else {
                fatalError("internal inconsistency in AccountState: phone change collides")
            }
            userByPhone[change.oldPhone] = nil
            userByPhone[change.newPhone] = change.user
            modify(change.user) { $0.phone = change.newPhone }
        case .phoneClaimed(let claim):
            guard userByPhone[claim.phone] == nil, phoneClaims[claim.phone].map({ $0.user == claim.user }) ?? true else {
                fatalError("internal inconsistency in AccountState: a claim on a phone held by another user")
            }
            phoneClaims[claim.phone] = PhoneClaim(user: claim.user, at: claim.at)
        case .phoneReleased(let release):
            guard phoneClaims[release.phone]?.user == release.user else {
                fatalError("internal inconsistency in AccountState: releasing a claim the user does not hold")
            }
            phoneClaims[release.phone] = nil
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

    /// Session ids are 128 random bits, checked unique within their user here (the only scope
    /// anything looks them up in) and unique across users by chance.
    private mutating func open(_ session: Session) {
        modify(session.user) { record in
            guard record.sessionIndex(session.id) == nil else {
                fatalError("internal inconsistency in AccountState: session id reused")
            }
            record.sessions.append(SessionRecord(session))
        }
    }

    /// A purge names sessions without their users (its stored form predates sessions kept with
    /// them), so it walks the accounts: it runs about hourly, and its decision walked them too.
    private mutating func purgeSessions(_ ids: [SessionID]) {
        var remaining = Set(ids)
        guard remaining.count == ids.count else {
            fatalError("internal inconsistency in AccountState: purging a session twice")
        }
        // Only the records that hold a purged session are written (and their pages copied, if shared).
        let holders = accounts.records.filter { $0.record.sessions.contains { remaining.contains($0.id) } }.map(\.user)
        for user in holders {
            modify(user) { $0.sessions.removeAll { remaining.remove($0.id) != nil } }
        }
        guard remaining.isEmpty else {
            fatalError("internal inconsistency in AccountState: purging an unknown session")
        }
    }

    private mutating func modify(_ user: UserID, _ change: (inout AccountRecord) -> Void) {
        guard accounts.modify(user, change) else {
            fatalError("internal inconsistency in AccountState: event for unknown user \(user)")
        }
    }
}

extension AccountState {
    private enum CodingKeys: String, CodingKey {
        case accounts, userByPhone, sessions, grantedAdministrators, feedback, nextUserID, phoneClaims
    }

    /// Reads the form `encode(to:)` writes, which is the form the state had when it was a plain
    /// struct of dictionaries.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(accounts: try container.decode([UserID: UserAccount].self, forKey: .accounts),
                  userByPhone: try container.decode([PhoneNumber: UserID].self, forKey: .userByPhone),
                  sessions: try container.decode([SessionID: Session].self, forKey: .sessions),
                  grantedAdministrators: try container.decode(Set<UserID>.self, forKey: .grantedAdministrators),
                  feedback: try container.decode([FeedbackEntry].self, forKey: .feedback),
                  nextUserID: try container.decode(UInt64.self, forKey: .nextUserID),
                  phoneClaims: try container.decodeIfPresent([PhoneNumber: PhoneClaim].self, forKey: .phoneClaims) ?? [:])
    }

    /// Writes `accounts` and `sessions` as the standard library writes a `[UserID: UserAccount]`
    /// and a `[SessionID: Session]` (keys that are neither strings nor integers: an unkeyed
    /// container of key, value, key, value…), building one `UserAccount` or `Session` at a time.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let records = accounts.records
        try container.encode(UnkeyedPairs { pairs in
            for (id, record) in records {
                try pairs.encode(id)
                try pairs.encode(record.account(id: id))
            }
        }, forKey: .accounts)
        try container.encode(userByPhone, forKey: .userByPhone)
        try container.encode(UnkeyedPairs { pairs in
            for (user, record) in records {
                for session in record.sessions {
                    try pairs.encode(session.id)
                    try pairs.encode(session.session(user: user))
                }
            }
        }, forKey: .sessions)
        try container.encode(grantedAdministrators, forKey: .grantedAdministrators)
        try container.encode(feedback, forKey: .feedback)
        try container.encode(nextUserID, forKey: .nextUserID)
        // Written only when there are any, so a state without is the form nodes from before read.
        if !phoneClaims.isEmpty { try container.encode(phoneClaims, forKey: .phoneClaims) }
    }
}

/// A phone of this partition held by `user` of another partition since `at` (its last claim).
public struct PhoneClaim: Codable, Sendable, Equatable {
    public var user: UserID
    public var at: Timestamp

    public init(user: UserID, at: Timestamp) {
        self.user = user
        self.at = at
    }
}

/// Encodes what `write` writes into one unkeyed container, as `Dictionary.encode(to:)` does.
private struct UnkeyedPairs: Encodable {
    let write: (inout any UnkeyedEncodingContainer) throws -> Void

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try write(&container)
    }
}
