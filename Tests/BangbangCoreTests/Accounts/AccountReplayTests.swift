import Foundation
import Testing
@testable import BangbangCore

@Suite struct AccountReplayTests {
    /// A history touching every kind of event.
    static func recordedHistory() throws -> AccountHarness {
        var harness = AccountHarness(policy: AccountPolicy(campuses: ["东校区"],
                                                           administratorPhones: [PhoneNumber(rawValue: "+8613000000000")]))
        let admin = try harness.logIn("13000000000", device: "desk").user
        let (user, token) = try harness.logIn("13800138000", device: "phone")
        let helper = try harness.logIn("13700137000").user
        _ = try harness.logIn("13800138000", device: "pad")
        try harness.decide { try $0.decideSetPassword(user: user, passwordHash: "scrypt$1$8$1$AA==$AA==", now: $1) }
        let challenge = try harness.store.passwordChallenge(phone: "13800138000", now: harness.now)
        try harness.run(harness.store.decidePasswordLogin(challenge, passwordMatches: true, device: "web",
                                                          now: harness.now, using: &harness.generator))
        let session = try harness.store.authenticate(token: token, secret: AccountHarness.secret, now: harness.now)
        try harness.decide { try $0.decideRevokeSession(user: user, session: session.session, now: $1) }
        try harness.decide {
            try $0.decideProfileUpdate(user: user, update: .init(nickname: "小明", avatarURL: "https://a.example/x.png",
                                                                 gender: .male, campus: "东校区", dorm: "3-101", bio: "hi"),
                                       now: $1)
        }
        let code = try harness.requestCode("13900139000", purpose: .changePhone, requester: user)
        try harness.run(harness.store.decidePhoneChange(user: user, newPhone: "13900139000", code: code.code, now: harness.now))
        try harness.decide {
            try $0.decideVerificationSubmission(user: user, realName: "张三", studentID: "42", school: "东校区", now: $1)
        }
        try harness.decide {
            try $0.decideVerificationRejection(administrator: admin, user: user, reason: "blurry", now: $1)
        }
        harness.advance(seconds: 5)
        try harness.decide {
            try $0.decideVerificationSubmission(user: user, realName: "张三", studentID: "42", school: "东校区", now: $1)
        }
        try harness.decide { try $0.decideAdministratorGrant(by: admin, to: helper, now: $1) }
        try harness.decide { try $0.decideVerificationApproval(administrator: helper, user: user, now: $1) }
        try harness.decide { try $0.decideAdministratorRevocation(by: admin, from: helper, now: $1) }
        try harness.decide { try $0.decideFeedback(user: user, text: "great", contact: "wx: ming", now: $1) }
        try harness.decide { try $0.decideFeedback(user: helper, text: "slow", contact: nil, now: $1) }
        harness.advance(seconds: 31 * 24 * 3600)
        _ = try harness.logIn("13800138000", device: "back")
        harness.commit(try #require(harness.store.decideSessionPurge(now: harness.now)))
        return harness
    }

    @Test func replayingTheJournalRebuildsAnEqualState() throws {
        let harness = try Self.recordedHistory()
        var kinds = Set<String>()
        for event in harness.journal { kinds.insert(String(describing: event).prefix { $0 != "(" }.description) }
        #expect(kinds.count == 11, "history should cover every event kind: \(kinds.sorted())")

        var replayed = AccountState()
        for event in harness.journal { replayed.apply(event) }
        #expect(replayed == harness.store.state)

        // A store recovered from the journal answers like the original.
        let recovered = AccountStore(policy: harness.store.policy, state: replayed)
        let user = try #require(replayed.userByPhone[PhoneNumber(rawValue: "+8613900139000")])
        #expect(recovered.canRunErrands(user))
        #expect(try recovered.user(user, viewer: nil) == harness.store.user(user, viewer: nil))
        #expect(recovered.activeSessions(of: user, now: harness.now) == harness.store.activeSessions(of: user, now: harness.now))
    }

    @Test func replayingAPrefixThenTheRestAlsoMatches() throws {
        let harness = try Self.recordedHistory()
        let middle = harness.journal.count / 2
        var snapshot = AccountState()
        for event in harness.journal[..<middle] { snapshot.apply(event) }
        let data = try JSONEncoder().encode(snapshot)
        var restored = try JSONDecoder().decode(AccountState.self, from: data)
        for event in harness.journal[middle...] { restored.apply(event) }
        #expect(restored == harness.store.state)
    }

    @Test func stateSurvivesAJSONRoundTrip() throws {
        let harness = try Self.recordedHistory()
        let data = try JSONEncoder().encode(harness.store.state)
        #expect(try JSONDecoder().decode(AccountState.self, from: data) == harness.store.state)
    }

    @Test func everyEventSurvivesAJSONRoundTrip() throws {
        let harness = try Self.recordedHistory()
        for event in harness.journal {
            let data = try JSONEncoder().encode(event)
            #expect(try JSONDecoder().decode(AccountEvent.self, from: data) == event)
        }
        let issue = CodeIssue(phone: PhoneNumber(rawValue: "+8613800138000"), purpose: .changePhone, code: "012345",
                              issuedAt: harness.now, expiresAt: harness.now.adding(milliseconds: 1),
                              requester: UserID(3), clientIP: "::1")
        let throttleEvents: [AccountThrottleEvent] = [
            .codeIssued(issue), .codeConsumed(phone: issue.phone, purpose: .login),
            .codeAttemptFailed(phone: issue.phone, purpose: .changePhone),
            .passwordFailed(phone: issue.phone, at: harness.now), .passwordSucceeded(phone: issue.phone),
        ]
        for event in throttleEvents {
            #expect(try JSONDecoder().decode(AccountThrottleEvent.self, from: JSONEncoder().encode(event)) == event)
        }
    }

    @Test func sameSeedSameHistory() throws {
        let first = try Self.recordedHistory()
        let second = try Self.recordedHistory()
        #expect(first.journal == second.journal)
        #expect(first.store == second.store)
    }

    @Test func wireNamesAreStable() throws {
        let phone = try JSONEncoder().encode(PhoneNumber(rawValue: "+8613800138000"))
        #expect(String(decoding: phone, as: UTF8.self) == "\"+8613800138000\"")
        #expect(CodePurpose.changePhone.rawValue == "change_phone")
        #expect(ErrorCode.phoneTaken.rawValue == "phone_taken")
        #expect(ErrorCode.sessionRevoked.rawValue == "session_revoked")
        #expect(ErrorCode.sessionExpired.rawValue == "session_expired")
        #expect(ErrorCode.unauthenticated.rawValue == "unauthenticated")
    }
}
