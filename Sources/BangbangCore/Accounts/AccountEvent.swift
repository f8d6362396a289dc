// The journaled facts of the accounts part. Each is produced by a decide method of
// `AccountStore`, journaled by the server, then applied; replaying them rebuilds `AccountState`.

public enum AccountEvent: Codable, Sendable, Equatable {
    /// An unknown phone logged in with a code: a new account and its first session.
    case registered(Registration)
    /// An existing account logged in (code or password): a new session.
    case loggedIn(Login)
    case passwordSet(PasswordSet)
    case sessionRevoked(SessionRevocation)
    /// Housekeeping: expired sessions forgotten so the state does not grow with every login.
    case sessionsPurged(SessionPurge)
    case profileUpdated(ProfileChange)
    case phoneChanged(PhoneChange)
    case verificationSubmitted(VerificationSubmission)
    case verificationDecided(VerificationDecision)
    case administratorChanged(AdministratorChange)
    case feedbackSubmitted(FeedbackEntry)
    /// In the partition a phone hashes to, the phone taken by a user whose account lives in
    /// another: a login by phone starts in the phone's partition, and a phone belongs to one
    /// account at most across every partition, so nobody else may have it. Made again by the same
    /// user, it is stamped anew.
    case phoneClaimed(PhoneClaimChange)
    /// That claim given up: the user moved on, or never moved there.
    case phoneReleased(PhoneClaimChange)

    /// Users whose connected devices must be told of this event live (beyond the reply to the
    /// device that caused it).
    public var recipients: [UserID] {
        switch self {
        case .registered, .verificationSubmitted, .feedbackSubmitted, .sessionsPurged, .phoneClaimed, .phoneReleased:
            return []
        case .loggedIn(let login): return [login.session.user]
        case .passwordSet(let change): return [change.user]
        case .sessionRevoked(let revocation): return [revocation.user]
        case .profileUpdated(let change): return [change.user]
        case .phoneChanged(let change): return [change.user]
        case .verificationDecided(let decision): return [decision.user]
        case .administratorChanged(let change): return [change.user]
        }
    }

    /// The session a login event opened; the server signs it into a token for the reply.
    public var openedSession: Session? {
        switch self {
        case .registered(let registration): return registration.session
        case .loggedIn(let login): return login.session
        default: return nil
        }
    }
}

extension AccountEvent {
    public struct Registration: Codable, Sendable, Equatable {
        public var user: UserID
        public var phone: PhoneNumber
        public var nickname: String
        public var session: Session
    }

    public enum LoginMethod: String, Codable, Sendable {
        case code
        case password
    }

    public struct Login: Codable, Sendable, Equatable {
        public var session: Session
        public var method: LoginMethod
    }

    public struct PasswordSet: Codable, Sendable, Equatable {
        public var user: UserID
        /// The scrypt record from `Crypto.PasswordHasher`, never the password.
        public var passwordHash: String
        /// False for the first password, true when an old one was replaced.
        public var isChange: Bool
        public var at: Timestamp
    }

    public struct SessionRevocation: Codable, Sendable, Equatable {
        public var user: UserID
        public var session: SessionID
        public var at: Timestamp
    }

    public struct SessionPurge: Codable, Sendable, Equatable {
        public var sessions: [SessionID]
        public var at: Timestamp
    }

    public struct ProfileChange: Codable, Sendable, Equatable {
        public var user: UserID
        /// Validated and normalized: "" clears an optional field.
        public var update: ProfileUpdate
        public var at: Timestamp
    }

    public struct PhoneChange: Codable, Sendable, Equatable {
        public var user: UserID
        public var oldPhone: PhoneNumber
        public var newPhone: PhoneNumber
        public var at: Timestamp
    }

    public struct PhoneClaimChange: Codable, Sendable, Equatable {
        public var phone: PhoneNumber
        public var user: UserID
        public var at: Timestamp

        public init(phone: PhoneNumber, user: UserID, at: Timestamp) {
            self.phone = phone
            self.user = user
            self.at = at
        }
    }

    public struct VerificationSubmission: Codable, Sendable, Equatable {
        public var user: UserID
        public var realName: String
        public var studentID: String
        public var school: String
        public var at: Timestamp
    }

    public struct VerificationDecision: Codable, Sendable, Equatable {
        public var user: UserID
        public var administrator: UserID
        public var isApproved: Bool
        /// Why it was rejected; nil when approved.
        public var reason: String?
        public var at: Timestamp
    }

    public struct AdministratorChange: Codable, Sendable, Equatable {
        public var user: UserID
        public var grantedBy: UserID
        /// True for a grant, false for a revocation.
        public var isAdministrator: Bool
        public var at: Timestamp
    }
}
