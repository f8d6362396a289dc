// The compact in-memory form of accounts (AccountRecord.swift): the stored form it reads and
// writes is the one the state had as a struct of dictionaries, rare fields leave no box behind
// once cleared, and sessions kept with their users are found, revoked and purged through them.
import Foundation
import Testing
import TestSupport
@testable import BangbangCore

/// `AccountState` as it was declared before accounts were kept as records: its synthesized
/// Codable form is the stored form that snapshots hold.
private struct DictionaryAccountState: Codable, Equatable {
    var accounts: [UserID: UserAccount]
    var userByPhone: [PhoneNumber: UserID]
    var sessions: [SessionID: Session]
    var grantedAdministrators: Set<UserID>
    var feedback: [FeedbackEntry]
    var nextUserID: UInt64

    /// What `state` shows through its public API.
    init(_ state: AccountState) {
        var accounts: [UserID: UserAccount] = [:]
        var sessions: [SessionID: Session] = [:]
        for user in state.accounts.keys {
            let account = state.accounts[user]!
            accounts[user] = account
            for id in account.sessions { sessions[id] = state.sessions[id]! }
        }
        self.accounts = accounts
        self.userByPhone = state.userByPhone
        self.sessions = sessions
        self.grantedAdministrators = state.grantedAdministrators
        self.feedback = state.feedback
        self.nextUserID = state.nextUserID
    }
}

@Suite struct AccountRecordTests {
    @Test func storedFormIsTheDictionaryForm() throws {
        // Before the history's last event, a purge: every session is still there, one revoked.
        var state = AccountState()
        for event in try AccountReplayTests.recordedHistory().journal.dropLast() { state.apply(event) }
        let shown = DictionaryAccountState(state)
        #expect(shown.accounts.count == 4 && shown.sessions.count == 6)
        #expect(shown.sessions.values.contains { $0.isRevoked })

        let written = try JSONEncoder().encode(state)
        #expect(try JSONDecoder().decode(DictionaryAccountState.self, from: written) == shown)
        let writtenByDictionaries = try JSONEncoder().encode(shown)
        #expect(try JSONDecoder().decode(AccountState.self, from: writtenByDictionaries) == state)
    }

    @Test func oneAccountIsWrittenByteForByteAsBefore() throws {
        var harness = AccountHarness()
        _ = try harness.logIn("13800138000", device: "iPhone 15")
        let state = harness.store.state
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let written = String(decoding: try encoder.encode(state), as: UTF8.self)
        #expect(written == String(decoding: try encoder.encode(DictionaryAccountState(state)), as: UTF8.self))
        #expect(written.contains(#""accounts":[1,{"#) && written.contains(#""device":"iPhone 15""#))
    }

    @Test func clearedProfileFieldsLeaveTheRecordAsItWas() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        let plain = harness.store.state
        try harness.decide {
            try $0.decideProfileUpdate(user: user, update: .init(avatarURL: "https://a.example/x.png", gender: .female,
                                                                 dorm: "3-101", bio: "hi"), now: $1)
        }
        #expect(harness.store.state != plain)
        #expect(harness.store.state.accounts[user]?.profile.bio == "hi")
        try harness.decide {
            try $0.decideProfileUpdate(user: user, update: .init(avatarURL: "", gender: .undisclosed, dorm: "", bio: ""),
                                       now: $1)
        }
        #expect(harness.store.state == plain)
    }

    @Test func rareFieldsChangeOneAtATime() throws {
        var harness = AccountHarness(policy: AccountPolicy(campuses: ["东校区"]))
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideProfileUpdate(user: user, update: .init(campus: "东校区"), now: $1) }
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: "scrypt$1$8$1$AA==$AA==", now: $1) }
        try harness.decide {
            try $0.decideVerificationSubmission(user: user, realName: "张三", studentID: "42", school: "东校区", now: $1)
        }
        let account = try #require(harness.store.state.accounts[user])
        #expect(account.profile == Profile(nickname: "用户1", campus: "东校区"))
        #expect(account.passwordHash == "scrypt$1$8$1$AA==$AA==")
        #expect(account.verification?.status == .pending && account.verification?.realName == "张三")
        try harness.decide { try $0.decideProfileUpdate(user: user, update: .init(campus: ""), now: $1) }
        let after = try #require(harness.store.state.accounts[user])
        #expect(after.profile.campus == nil && after.passwordHash == account.passwordHash
                && after.verification == account.verification)
    }

    @Test func aTokenFindsASessionOnlyThroughItsOwnUser() throws {
        var harness = AccountHarness()
        let (alice, _) = try harness.logIn("13800138000")
        let (bob, bobToken) = try harness.logIn("13900139000")
        let bobSession = try harness.store.authenticate(token: bobToken, secret: AccountHarness.secret, now: harness.now)
        let issuedAt = try #require(harness.store.state.sessions[bobSession.session]).issuedAt
        // Signed with the server's secret, but naming Alice with Bob's session.
        let forged = SessionToken.make(for: Session(id: bobSession.session, user: alice, device: nil, issuedAt: issuedAt,
                                                    expiresAt: issuedAt.adding(milliseconds: 1)),
                                       secret: AccountHarness.secret)
        expectAccountError(.unauthenticated) {
            try harness.store.authenticate(token: forged, secret: AccountHarness.secret, now: harness.now)
        }
        expectAccountError(.notFound, field: "session") {
            try harness.store.decideRevokeSession(user: alice, session: bobSession.session, now: harness.now)
        }
        #expect(harness.store.activeSessions(of: bob, now: harness.now).map(\.id) == [bobSession.session])
    }

    @Test func purgeWalksEveryAccountAndKeepsTheRestInOrder() throws {
        var harness = AccountHarness(policy: AccountPolicy(sessionLifetime: .seconds(3600)))
        let phones = ["13800138000", "13900139000", "13700137000"]
        var users: [UserID] = []
        for phone in phones { users.append(try harness.logIn(phone, device: "first").user) }
        harness.advance(seconds: 1800)
        for phone in phones { _ = try harness.logIn(phone, device: "second") }
        for phone in phones.prefix(2) { _ = try harness.logIn(phone, device: "third") }
        let before = users.map { harness.store.activeSessions(of: $0, now: harness.now) }
        #expect(before.map(\.count) == [3, 3, 2])

        harness.advance(seconds: 1800 - 61 * 5)
        let purge = try #require(harness.store.decideSessionPurge(now: harness.now))
        guard case .sessionsPurged(let batch) = purge else {
            Issue.record("expected a purge")
            return
        }
        #expect(Set(batch.sessions) == Set(before.map { $0[0].id }))
        harness.commit(purge)
        for (index, user) in users.enumerated() {
            #expect(harness.store.activeSessions(of: user, now: harness.now) == Array(before[index].dropFirst()))
            #expect(harness.store.state.accounts[user]?.sessions == before[index].dropFirst().map(\.id))
        }
        #expect(harness.store.state.sessions.count == 5)

        var replayed = AccountState()
        for event in harness.journal { replayed.apply(event) }
        #expect(replayed == harness.store.state)
    }

    @Test func theStoredFormKeepsTheSessionsEachAccountLists() throws {
        let now = AccountHarness.start
        let listed = SessionID(high: 1, low: 1), unlisted = SessionID(high: 2, low: 2)
        let others = SessionID(high: 3, low: 3), missing = SessionID(high: 4, low: 4)
        let first = UserAccount(id: UserID(1), phone: PhoneNumber(rawValue: "+8613800000001"), passwordHash: nil,
                                profile: Profile(nickname: "a"), verification: nil, registeredAt: now,
                                sessions: [missing, others, listed])
        let second = UserAccount(id: UserID(2), phone: PhoneNumber(rawValue: "+8613800000002"), passwordHash: nil,
                                 profile: Profile(nickname: "b"), verification: nil, registeredAt: now, sessions: [])
        func session(_ id: SessionID, _ user: UInt64) -> Session {
            Session(id: id, user: UserID(user), device: nil, issuedAt: now, expiresAt: now.adding(milliseconds: 10))
        }
        let state = AccountState(accounts: [first.id: first, second.id: second],
                                 userByPhone: [first.phone: first.id, second.phone: second.id],
                                 sessions: [listed: session(listed, 1), unlisted: session(unlisted, 1), others: session(others, 2)],
                                 grantedAdministrators: [], feedback: [], nextUserID: 3)
        #expect(state.accounts[UserID(1)]?.sessions == [listed])
        #expect(state.accounts[UserID(2)]?.sessions == [])
        #expect(state.sessions.count == 1 && state.sessions[listed] == session(listed, 1) && state.sessions[unlisted] == nil)
    }

    @Test func recordsStayCompact() {
        // A dictionary of accounts holds a record per bucket, with about a third of the buckets
        // spare: every 8 bytes here cost about 13 per account.
        #expect(MemoryLayout<AccountRecord>.stride <= 112)
        #expect(MemoryLayout<SessionRecord>.stride <= 64)
    }
}
