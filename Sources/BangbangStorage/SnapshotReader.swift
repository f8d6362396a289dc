// Snapshots read straight from the keyed binary form, without Codable: a restart used to spend
// half its CPU building and freeing the tree the generic decoder answers Codable from (accounts,
// sessions, profiles, personal streams, and every order's nodes before the order reader ran).
//
// It reads what `SnapshotContents.init(from:)` and the synthesized `init(from:)` methods of the
// account types read, under StoredOrderReader.swift's rules (members in any order, unknown ones
// skipped, optionals absent or null are nil, a key twice or trailing bytes are corruption), and
// with the standard library's rules for collections: a dictionary whose keys are neither strings
// nor integers is an unkeyed container of keys and values in turn, a later key replacing an
// earlier one; a set keeps one of equal elements. Nesting depths are counted from the snapshot's
// top, as the tree decoder counts them. `SnapshotContents.decode` falls back to the tree decoder
// whenever this reader refuses a snapshot or finds a version it does not read (1, whose streams
// are stored differently, or an unsupported one), so a refusal is always the tree decoder's own
// error. `SnapshotReaderTests` holds the two to the same values and the same verdicts. A
// partition's half (PartitionState.swift) is read by the same field reader, with nothing to fall
// back to.
import BangbangCore

extension KeyedBinaryReader {
    /// The fields a snapshot or a partition's half may hold, each nil when absent.
    struct SnapshotFields {
        var formatVersion: Int?, half: String?, accounts: AccountState?, shards: [BoardShard]?
        var streams: [UserID: PersonalStream]?, boardSequences: [OrderType: UInt64]?
    }

    /// The top-level container at the reader's position, read under the rules above.
    mutating func readSnapshotFields() throws -> SnapshotFields {
        var fields = SnapshotFields()
        try readKeyed(depth: 0) { reader, key in
            switch key {
            case "formatVersion": fields.formatVersion = try reader.readInteger(Int.self)
            case "half": fields.half = try reader.readString()
            case "accounts": fields.accounts = try reader.readAccountState(depth: 1)
            case "shards": fields.shards = try reader.readShards(depth: 1)
            case "streams": fields.streams = try reader.readStreams(depth: 1)
            case "boardSequences":
                fields.boardSequences = try reader.readPairs(depth: 1) { try $0.readRawValue(OrderType.self) } value: { reader, _ in
                    try reader.readInteger(UInt64.self)
                }
            default: return false
            }
            return true
        }
        return fields
    }

    /// The snapshot at the reader's position; nil for a format version other than 2 or 3.
    mutating func readSnapshot() throws -> SnapshotContents? {
        let fields = try readSnapshotFields()
        guard try (2...3).contains(requireValue(fields.formatVersion, "formatVersion")) else { return nil }
        return SnapshotContents(accounts: try requireValue(fields.accounts, "accounts"), shards: try requireValue(fields.shards, "shards"),
                                streams: try requireValue(fields.streams, "streams"),
                                boardSequences: try requireValue(fields.boardSequences, "boardSequences"))
    }

    private mutating func readShards(depth: Int) throws -> [BoardShard] {
        var shards: [BoardShard] = []
        try readUnkeyed(depth: depth) { reader in
            var index: Int?, nextSerial: UInt64?, orders: [Order]?
            try reader.readKeyed(depth: depth + 1) { reader, key in
                switch key {
                case "index": index = try reader.readInteger(Int.self)
                case "nextSerial": nextSerial = try reader.readInteger(UInt64.self)
                case "orders":
                    var read: [Order] = []
                    try reader.readUnkeyed(depth: depth + 2) { reader in read.append(try reader.readOrder(depth: depth + 3)) }
                    orders = read
                default: return false
                }
                return true
            }
            let shardIndex = try reader.requireValue(index, "index")
            guard let shard = BoardShard(index: shardIndex, nextSerial: try reader.requireValue(nextSerial, "nextSerial"),
                                         restoring: try reader.requireValue(orders, "orders")) else {
                throw reader.corrupt("shard \(shardIndex) is out of range or holds an order that does not belong to it")
            }
            shards.append(shard)
        }
        return shards
    }

    /// The streams as written since version 2: entries still live, each message as text.
    private mutating func readStreams(depth: Int) throws -> [UserID: PersonalStream] {
        try readPairs(depth: depth) { try $0.readUser() } value: { (reader: inout KeyedBinaryReader, depth: Int) -> PersonalStream in
            var lastSequence: UInt64?, entries: [PersonalStream.Entry]?
            try reader.readKeyed(depth: depth) { reader, key in
                switch key {
                case "lastSequence": lastSequence = try reader.readInteger(UInt64.self)
                case "entries":
                    var read: [PersonalStream.Entry] = []
                    try reader.readUnkeyed(depth: depth + 1) { reader in read.append(try reader.readStreamEntry(depth: depth + 2)) }
                    entries = read
                default: return false
                }
                return true
            }
            return PersonalStream(lastSequence: try reader.requireValue(lastSequence, "lastSequence"),
                                  entries: try reader.requireValue(entries, "entries"))
        }
    }

    private mutating func readStreamEntry(depth: Int) throws -> PersonalStream.Entry {
        var sequence: UInt64?, at: Timestamp?, message: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "sequence": sequence = try reader.readInteger(UInt64.self)
            case "at": at = try reader.readTimestamp()
            case "message": message = try reader.readString()
            default: return false
            }
            return true
        }
        return PersonalStream.Entry(sequence: try requireValue(sequence, "sequence"), at: try requireValue(at, "at"),
                                    message: Array(try requireValue(message, "message").utf8))
    }

    private mutating func readAccountState(depth: Int) throws -> AccountState {
        var accounts: [UserID: UserAccount]?, userByPhone: [PhoneNumber: UserID]?, sessions: [SessionID: Session]?
        var administrators: Set<UserID>?, feedback: [FeedbackEntry]?, nextUserID: UInt64?
        var phoneClaims: [PhoneNumber: PhoneClaim] = [:]
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "accounts":
                accounts = try reader.readPairs(depth: depth + 1) { try $0.readUser() } value: { try $0.readAccount(depth: $1) }
            case "userByPhone":
                userByPhone = try reader.readPairs(depth: depth + 1) { try $0.readPhone() } value: { reader, _ in try reader.readUser() }
            case "sessions":
                sessions = try reader.readPairs(depth: depth + 1) { try $0.readSessionID(depth: depth + 2) } value: {
                    try $0.readSession(depth: $1)
                }
            case "grantedAdministrators":
                var read: Set<UserID> = []
                try reader.readUnkeyed(depth: depth + 1) { reader in read.insert(try reader.readUser()) }
                administrators = read
            case "feedback":
                var read: [FeedbackEntry] = []
                try reader.readUnkeyed(depth: depth + 1) { reader in read.append(try reader.readFeedback(depth: depth + 2)) }
                feedback = read
            case "nextUserID": nextUserID = try reader.readInteger(UInt64.self)
            case "phoneClaims":
                phoneClaims = try reader.readPairs(depth: depth + 1) { try $0.readPhone() } value: { try $0.readPhoneClaim(depth: $1) }
            default: return false
            }
            return true
        }
        return AccountState(accounts: try requireValue(accounts, "accounts"), userByPhone: try requireValue(userByPhone, "userByPhone"),
                            sessions: try requireValue(sessions, "sessions"),
                            grantedAdministrators: try requireValue(administrators, "grantedAdministrators"),
                            feedback: try requireValue(feedback, "feedback"), nextUserID: try requireValue(nextUserID, "nextUserID"),
                            phoneClaims: phoneClaims)
    }

    private mutating func readPhoneClaim(depth: Int) throws -> PhoneClaim {
        var user: UserID?, at: Timestamp?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "user": user = try reader.readUser()
            case "at": at = try reader.readTimestamp()
            default: return false
            }
            return true
        }
        return PhoneClaim(user: try requireValue(user, "user"), at: try requireValue(at, "at"))
    }

    private mutating func readAccount(depth: Int) throws -> UserAccount {
        var id: UserID?, phone: PhoneNumber?, passwordHash: String?, profile: Profile?
        var verification: RunnerVerification?, registeredAt: Timestamp?, sessions: [SessionID]?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "id": id = try reader.readUser()
            case "phone": phone = try reader.readPhone()
            case "passwordHash": passwordHash = try reader.readOptional { try $0.readString() }
            case "profile": profile = try reader.readProfile(depth: depth + 1)
            case "verification": verification = try reader.readOptional { try $0.readVerification(depth: depth + 1) }
            case "registeredAt": registeredAt = try reader.readTimestamp()
            case "sessions":
                var read: [SessionID] = []
                try reader.readUnkeyed(depth: depth + 1) { reader in read.append(try reader.readSessionID(depth: depth + 2)) }
                sessions = read
            default: return false
            }
            return true
        }
        return UserAccount(id: try requireValue(id, "id"), phone: try requireValue(phone, "phone"), passwordHash: passwordHash,
                           profile: try requireValue(profile, "profile"), verification: verification,
                           registeredAt: try requireValue(registeredAt, "registeredAt"), sessions: try requireValue(sessions, "sessions"))
    }

    private mutating func readProfile(depth: Int) throws -> Profile {
        var nickname: String?, avatarURL: String?, gender: Gender?, campus: String?, dorm: String?, bio: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "nickname": nickname = try reader.readString()
            case "avatarURL": avatarURL = try reader.readOptional { try $0.readString() }
            case "gender": gender = try reader.readRawValue(Gender.self)
            case "campus": campus = try reader.readOptional { try $0.readString() }
            case "dorm": dorm = try reader.readOptional { try $0.readString() }
            case "bio": bio = try reader.readOptional { try $0.readString() }
            default: return false
            }
            return true
        }
        return Profile(nickname: try requireValue(nickname, "nickname"), avatarURL: avatarURL, gender: try requireValue(gender, "gender"),
                       campus: campus, dorm: dorm, bio: bio)
    }

    private mutating func readVerification(depth: Int) throws -> RunnerVerification {
        var status: VerificationStatus?, realName: String?, studentID: String?, school: String?
        var submittedAt: Timestamp?, decidedAt: Timestamp?, decidedBy: UserID?, rejectionReason: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "status": status = try reader.readRawValue(VerificationStatus.self)
            case "realName": realName = try reader.readString()
            case "studentID": studentID = try reader.readString()
            case "school": school = try reader.readString()
            case "submittedAt": submittedAt = try reader.readTimestamp()
            case "decidedAt": decidedAt = try reader.readOptional { try $0.readTimestamp() }
            case "decidedBy": decidedBy = try reader.readOptional { try $0.readUser() }
            case "rejectionReason": rejectionReason = try reader.readOptional { try $0.readString() }
            default: return false
            }
            return true
        }
        return RunnerVerification(status: try requireValue(status, "status"), realName: try requireValue(realName, "realName"),
                                  studentID: try requireValue(studentID, "studentID"), school: try requireValue(school, "school"),
                                  submittedAt: try requireValue(submittedAt, "submittedAt"), decidedAt: decidedAt,
                                  decidedBy: decidedBy, rejectionReason: rejectionReason)
    }

    private mutating func readSession(depth: Int) throws -> Session {
        var id: SessionID?, user: UserID?, device: String?, issuedAt: Timestamp?, expiresAt: Timestamp?, revokedAt: Timestamp?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "id": id = try reader.readSessionID(depth: depth + 1)
            case "user": user = try reader.readUser()
            case "device": device = try reader.readOptional { try $0.readString() }
            case "issuedAt": issuedAt = try reader.readTimestamp()
            case "expiresAt": expiresAt = try reader.readTimestamp()
            case "revokedAt": revokedAt = try reader.readOptional { try $0.readTimestamp() }
            default: return false
            }
            return true
        }
        return Session(id: try requireValue(id, "id"), user: try requireValue(user, "user"), device: device,
                       issuedAt: try requireValue(issuedAt, "issuedAt"), expiresAt: try requireValue(expiresAt, "expiresAt"),
                       revokedAt: revokedAt)
    }

    private mutating func readSessionID(depth: Int) throws -> SessionID {
        var high: UInt64?, low: UInt64?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "high": high = try reader.readInteger(UInt64.self)
            case "low": low = try reader.readInteger(UInt64.self)
            default: return false
            }
            return true
        }
        return SessionID(high: try requireValue(high, "high"), low: try requireValue(low, "low"))
    }

    private mutating func readFeedback(depth: Int) throws -> FeedbackEntry {
        var id: UInt64?, user: UserID?, text: String?, contact: String?, submittedAt: Timestamp?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "id": id = try reader.readInteger(UInt64.self)
            case "user": user = try reader.readUser()
            case "text": text = try reader.readString()
            case "contact": contact = try reader.readOptional { try $0.readString() }
            case "submittedAt": submittedAt = try reader.readTimestamp()
            default: return false
            }
            return true
        }
        return FeedbackEntry(id: try requireValue(id, "id"), user: try requireValue(user, "user"), text: try requireValue(text, "text"),
                             contact: contact, submittedAt: try requireValue(submittedAt, "submittedAt"))
    }

    /// A dictionary as the standard library codes one whose keys are neither strings nor
    /// integers: an unkeyed container of key, value, key, value…; `value` gets the depth of a
    /// container it opens.
    private mutating func readPairs<Key: Hashable, Value>(
        depth: Int, key readKey: (inout KeyedBinaryReader) throws -> Key,
        value readValue: (inout KeyedBinaryReader, Int) throws -> Value
    ) throws -> [Key: Value] {
        var pairs: [Key: Value] = [:]
        try readUnkeyed(depth: depth) { reader in
            let key = try readKey(&reader)
            guard try !reader.isAtEndOfUnkeyed() else { throw reader.corrupt("a key without a value") }
            pairs[key] = try readValue(&reader, depth + 1)
        }
        return pairs
    }

    private mutating func readPhone() throws -> PhoneNumber { PhoneNumber(rawValue: try readString()) }
}
