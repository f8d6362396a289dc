// A phone moving to another pair's partition (AccountStore+PhoneMoves.swift): two partitions of
// a cluster of two, each its own store, played step by step as the nodes run them.
import Foundation
import Testing
@testable import BangbangCore

@Suite struct PhoneMoveTests {
    /// Partition 1 holds the moving user (odd ids); partition 0 the phone it moves to.
    struct TwoPartitions {
        var home = AccountHarness(policy: Self.policy(partition: 1))
        var target = AccountHarness(policy: Self.policy(partition: 0))
        let user: UserID
        let newPhone = PhoneNumber(rawValue: "+8613900139000")

        static func policy(partition: Int) -> AccountPolicy {
            var policy = AccountPolicy()
            policy.userIDs = IDSpace(partitions: 2, partition: partition)
            return policy
        }

        init() throws {
            user = try home.logIn("13800138000").user
            target.now = home.now
        }

        /// Claims `newPhone` in the target partition for `user` with the code sent there.
        mutating func claim() throws -> Timestamp {
            let issue = try target.requestCode(newPhone.rawValue, purpose: .changePhone, requester: user)
            try target.run(target.store.decidePhoneClaim(user: user, newPhone: newPhone.rawValue, code: issue.code, now: target.now))
            return target.now
        }
    }

    @Test func aClaimedPhoneMovesTheAccountAndLogsItIn() throws {
        var cluster = try TwoPartitions()
        #expect(cluster.user.rawValue % 2 == 1)
        let issue = try cluster.target.requestCode("13900139000", purpose: .changePhone, requester: cluster.user)
        #expect(issue.requester == cluster.user, "a user of another partition may ask for a code to move here")
        expectAccountError(.codeIncorrect, field: "code") {
            try cluster.target.run(cluster.target.store.decidePhoneClaim(user: cluster.user, newPhone: "13900139000",
                                                                          code: wrongSMSCode(issue.code), now: cluster.target.now))
        }
        let claimed = try cluster.target.run(cluster.target.store.decidePhoneClaim(user: cluster.user, newPhone: "13900139000",
                                                                                   code: issue.code, now: cluster.target.now))
        #expect(claimed == .phoneClaimed(.init(phone: cluster.newPhone, user: cluster.user, at: cluster.target.now)))
        #expect(claimed.recipients.isEmpty && cluster.target.store.state.accounts.isEmpty, "a claim is no account")
        #expect(cluster.target.store.freshClaim(on: cluster.newPhone, by: cluster.user, now: cluster.target.now) != nil)

        cluster.home.advance(seconds: 2)
        let moved = try cluster.home.run(cluster.home.store.decideClaimedPhoneChange(
            user: cluster.user, newPhone: cluster.newPhone, claimedAt: cluster.target.now, now: cluster.home.now))
        #expect(moved == .phoneChanged(.init(user: cluster.user, oldPhone: PhoneNumber(rawValue: "+8613800138000"),
                                             newPhone: cluster.newPhone, at: cluster.home.now)))
        #expect(cluster.home.store.phone(of: cluster.user) == cluster.newPhone)

        // A login by the phone: the code is proven where the phone is, the session opened at home.
        cluster.target.advance(seconds: 61)
        let login = try cluster.target.requestCode("13900139000")
        expectAccountError(.invalidField, field: "phone") {
            try cluster.target.codeLogin("13900139000", code: login.code)
        }
        cluster.target.advance(seconds: 61)
        let again = try cluster.target.requestCode("13900139000")
        #expect(cluster.target.store.proveLoginCode(wrongSMSCode(again.code), phone: cluster.newPhone, now: cluster.target.now).error?.code == .codeIncorrect)
        let proof = cluster.target.store.proveLoginCode(again.code, phone: cluster.newPhone, now: cluster.target.now)
        #expect(proof.error == nil && proof.throttle == [.codeConsumed(phone: cluster.newPhone, purpose: .login)])
        let session = try #require(cluster.home.store.decideClaimedCodeLogin(user: cluster.user, phone: cluster.newPhone, device: "pad",
                                                                              now: cluster.home.now, using: &cluster.home.generator))
        guard case .success(.loggedIn(let opened)) = session.outcome else {
            Issue.record("expected a login, got \(session.outcome)")
            return
        }
        #expect(opened.session.user == cluster.user && opened.method == .code && opened.session.device == "pad")
        #expect(cluster.home.store.decideClaimedCodeLogin(user: cluster.user, phone: PhoneNumber(rawValue: "+8613800138000"),
                                                          device: nil, now: cluster.home.now, using: &cluster.home.generator) == nil,
                "a session only for the account's own phone")
        // A password login at home finds the account by the phone that moved there.
        let challenge = try cluster.home.store.passwordChallenge(phone: "13900139000", now: cluster.home.now)
        #expect(challenge.user == cluster.user)
    }

    @Test func aClaimKeepsEveryoneElseOffThePhone() throws {
        var cluster = try TwoPartitions()
        let other = try cluster.target.logIn("13700137000").user
        cluster.home.now = cluster.target.now
        _ = try cluster.claim()
        expectAccountError(.phoneTaken, field: "phone") {
            try cluster.target.requestCode("13900139000", purpose: .changePhone, requester: other)
        }
        do {
            _ = try cluster.target.requestCode("13900139000", purpose: .changePhone, requester: cluster.user)
            Issue.record("a second code for a phone already claimed")
        } catch let error as DomainError {
            #expect(error.code == .phoneTaken && error.message.contains("already your"))
        }
        // Another user of the home partition, moving to the same phone, is refused where it is claimed.
        let neighbour = try cluster.home.logIn("13600136000").user
        expectAccountError(.phoneTaken, field: "phone") {
            try cluster.target.requestCode("13900139000", purpose: .changePhone, requester: neighbour)
        }
        // A phone of its own: the account partition's claim check refuses a user of its own.
        cluster.target.advance(seconds: 61)
        let own = try cluster.target.requestCode("13500135000", purpose: .changePhone, requester: other)
        expectAccountError(.invalidField, field: "user") {
            try cluster.target.run(cluster.target.store.decidePhoneClaim(user: other, newPhone: "13500135000", code: own.code,
                                                                          now: cluster.target.now))
        }
        // Nobody registers it, nobody of the partition moves to it.
        expectAccountError(.phoneTaken, field: "phone") {
            try cluster.target.requestCode("13900139000", purpose: .changePhone, requester: other)
        }
    }

    @Test func aClaimTooOldToBeSureOfIsNotTaken() throws {
        var cluster = try TwoPartitions()
        let claimedAt = try cluster.claim()
        cluster.home.now = claimedAt.adding(milliseconds: PhoneClaimAges.takeWithin + 1)
        expectAccountError(.codeExpired, field: "code") {
            try cluster.home.run(cluster.home.store.decideClaimedPhoneChange(user: cluster.user, newPhone: cluster.newPhone,
                                                                             claimedAt: claimedAt, now: cluster.home.now))
        }
        cluster.target.now = claimedAt.adding(milliseconds: PhoneClaimAges.takeWithin + 1)
        #expect(cluster.target.store.freshClaim(on: cluster.newPhone, by: cluster.user, now: cluster.target.now) == nil,
                "a move tried again this late asks for a new code")
    }

    @Test func aReleaseGivesUpOnlyTheClaimItNames() throws {
        var cluster = try TwoPartitions()
        let claimedAt = try cluster.claim()
        let store = cluster.target.store
        let now = cluster.target.now
        #expect(store.decidePhoneRelease(user: UserID(cluster.user.rawValue + 2), phone: cluster.newPhone, stampedBy: now,
                                         isUnused: false, now: now) == nil, "another user's release")
        #expect(store.decidePhoneRelease(user: cluster.user, phone: cluster.newPhone, stampedBy: claimedAt.adding(milliseconds: -1),
                                         isUnused: false, now: now) == nil, "a claim made again since")
        #expect(store.decidePhoneRelease(user: cluster.user, phone: cluster.newPhone, stampedBy: claimedAt, isUnused: true,
                                         now: now.adding(milliseconds: PhoneClaimAges.releasableAfter - 1)) == nil,
                "an unused claim young enough that its move may still take it")
        let released = try #require(store.decidePhoneRelease(user: cluster.user, phone: cluster.newPhone, stampedBy: claimedAt,
                                                             isUnused: true, now: now.adding(milliseconds: PhoneClaimAges.releasableAfter)))
        cluster.target.commit(released)
        #expect(cluster.target.store.claim(on: cluster.newPhone) == nil)
        // Free again: it registers.
        cluster.target.advance(seconds: 61)
        #expect(try cluster.target.logIn("13900139000").user.rawValue % 2 == 0)
    }

    @Test func claimsSurviveAReplayAndTheStatesCodableForm() throws {
        var cluster = try TwoPartitions()
        _ = try cluster.claim()
        var replayed = AccountState()
        for event in cluster.target.journal { replayed.apply(event) }
        #expect(replayed.phoneClaims == cluster.target.store.state.phoneClaims && replayed.phoneClaims.count == 1)
        let decoded = try JSONDecoder().decode(AccountState.self, from: try JSONEncoder().encode(cluster.target.store.state))
        #expect(decoded == cluster.target.store.state.placed(in: .all))
        let withoutClaims = try JSONEncoder().encode(AccountState())
        #expect(!String(decoding: withoutClaims, as: UTF8.self).contains("phoneClaims"), "written only when there are any")
    }
}
