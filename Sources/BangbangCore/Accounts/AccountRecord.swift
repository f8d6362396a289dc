// How an account is kept in memory, which is not how it is stored or shown.
//
// A server holds every account all the time, most of them for users who logged in once by SMS
// code and never set a password, filled in a profile or applied to run errands. So an
// `AccountRecord` keeps inline only what every account has — the phone, the nickname and gender,
// when it registered, and its sessions, the first of them inline too (`SmallList`) — and the
// rest (password hash, the optional profile fields, the runner verification) in one immutable
// box shared by copies, nil while all of it is empty. A session is kept with its user, without
// the user's id (`SessionRecord`): a token names its user, so the store never looks a session up
// by its id alone.
//
// `UserAccount` and `Session` remain the form an account and a session take everywhere else —
// in snapshots (AccountState's Codable form is unchanged), in queries, in tests — and are built
// from the records on demand.

/// One account as `AccountState` keeps it; `account(id:)` gives its `UserAccount` form.
struct AccountRecord: Sendable, Equatable {
    var phone: PhoneNumber
    var nickname: String
    var registeredAt: Timestamp
    /// Oldest first, revoked and expired ones included until purged.
    var sessions: SmallList<SessionRecord>
    var gender: Gender
    private var rare: RareFieldsBox?

    /// A new account's record: the default profile, no password, no verification.
    init(phone: PhoneNumber, nickname: String, registeredAt: Timestamp, sessions: SmallList<SessionRecord>) {
        self.phone = phone
        self.nickname = nickname
        self.registeredAt = registeredAt
        self.sessions = sessions
        self.gender = .undisclosed
        self.rare = nil
    }

    /// `account`'s record, with `sessions` (its sessions' records, oldest first).
    init(_ account: UserAccount, sessions: SmallList<SessionRecord>) {
        self.init(phone: account.phone, nickname: account.profile.nickname, registeredAt: account.registeredAt,
                  sessions: sessions)
        gender = account.profile.gender
        let fields = RareFields(passwordHash: account.passwordHash, avatarURL: account.profile.avatarURL,
                                campus: account.profile.campus, dorm: account.profile.dorm, bio: account.profile.bio,
                                verification: account.verification)
        rare = fields.isEmpty ? nil : RareFieldsBox(fields)
    }

    /// The account in its stored and shown form.
    func account(id: UserID) -> UserAccount {
        UserAccount(id: id, phone: phone, passwordHash: passwordHash, profile: profile, verification: verification,
                    registeredAt: registeredAt, sessions: sessions.map(\.id))
    }

    var profile: Profile {
        get {
            Profile(nickname: nickname, avatarURL: rare?.fields.avatarURL, gender: gender, campus: rare?.fields.campus,
                    dorm: rare?.fields.dorm, bio: rare?.fields.bio)
        }
        set {
            nickname = newValue.nickname
            gender = newValue.gender
            changeRareFields {
                $0.avatarURL = newValue.avatarURL
                $0.campus = newValue.campus
                $0.dorm = newValue.dorm
                $0.bio = newValue.bio
            }
        }
    }

    var passwordHash: String? {
        get { rare?.fields.passwordHash }
        set { changeRareFields { $0.passwordHash = newValue } }
    }

    var verification: RunnerVerification? {
        get { rare?.fields.verification }
        set { changeRareFields { $0.verification = newValue } }
    }

    /// Rare fields change rarely: each change makes a new box (or none, when all are empty).
    private mutating func changeRareFields(_ change: (inout RareFields) -> Void) {
        var fields = rare?.fields ?? RareFields()
        change(&fields)
        guard fields != rare?.fields ?? RareFields() else { return }
        rare = fields.isEmpty ? nil : RareFieldsBox(fields)
    }

    /// The index of session `id` in `sessions`.
    func sessionIndex(_ id: SessionID) -> Int? { sessions.firstIndex { $0.id == id } }
}

/// What most accounts never have.
private struct RareFields: Sendable, Equatable {
    var passwordHash: String?
    var avatarURL: String?
    var campus: String?
    var dorm: String?
    var bio: String?
    var verification: RunnerVerification?

    var isEmpty: Bool { self == RareFields() }
}

/// Immutable, so copies of a record share it.
private final class RareFieldsBox: Sendable, Equatable {
    let fields: RareFields

    init(_ fields: RareFields) { self.fields = fields }

    static func == (lhs: RareFieldsBox, rhs: RareFieldsBox) -> Bool { lhs === rhs || lhs.fields == rhs.fields }
}

/// One session as its user's record keeps it; `session(user:)` gives its `Session` form.
struct SessionRecord: Sendable, Equatable {
    var id: SessionID
    var device: String?
    var issuedAt: Timestamp
    var expiresAt: Timestamp
    var revokedAt: Timestamp?

    init(_ session: Session) {
        id = session.id
        device = session.device
        issuedAt = session.issuedAt
        expiresAt = session.expiresAt
        revokedAt = session.revokedAt
    }

    func session(user: UserID) -> Session {
        Session(id: id, user: user, device: device, issuedAt: issuedAt, expiresAt: expiresAt, revokedAt: revokedAt)
    }

    var isRevoked: Bool { revokedAt != nil }
}
