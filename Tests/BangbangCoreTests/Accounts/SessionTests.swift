import Testing
import Crypto
@testable import BangbangCore

@Suite struct SessionTests {
    @Test func tokenAuthenticatesItsSession() throws {
        var harness = AccountHarness()
        let (user, token) = try harness.logIn("13800138000", device: "phone")
        let session = try harness.store.authenticate(token: token, secret: AccountHarness.secret, now: harness.now)
        #expect(session.user == user)
        #expect(harness.store.state.sessions[session.session]?.device == "phone")
        #expect(token.count == 87 && !token.contains("=") && !token.contains("+") && !token.contains("/"))
    }

    @Test func flippingAnyByteOfTheTokenIsRejected() throws {
        var harness = AccountHarness()
        let token = try harness.logIn("13800138000").token
        let bytes = try #require(Base64.decode(token))
        for index in bytes.indices {
            var tampered = bytes
            tampered[index] ^= 0x01
            let forged = Base64.encode(tampered, urlSafe: true)
            expectAccountError(.unauthenticated) {
                try harness.store.authenticate(token: forged, secret: AccountHarness.secret, now: harness.now)
            }
        }
    }

    @Test func changingAnyCharacterOfTheTokenIsRejected() throws {
        var harness = AccountHarness()
        let token = Array(try harness.logIn("13800138000").token)
        for index in token.indices {
            var tampered = token
            tampered[index] = tampered[index] == "A" ? "B" : "A"
            expectAccountError(.unauthenticated) {
                try harness.store.authenticate(token: String(tampered), secret: AccountHarness.secret, now: harness.now)
            }
        }
    }

    @Test func malformedTokensAreRejected() throws {
        var harness = AccountHarness()
        let token = try harness.logIn("13800138000").token
        for bad in ["", "not a token", String(token.dropLast()), token + "A", String(token.dropFirst()),
                    String(repeating: "A", count: 87), String(repeating: "A", count: 10_000)] {
            expectAccountError(.unauthenticated) {
                try harness.store.authenticate(token: bad, secret: AccountHarness.secret, now: harness.now)
            }
        }
    }

    @Test func tokenSignedUnderAnotherSecretIsRejected() throws {
        var harness = AccountHarness()
        let token = try harness.logIn("13800138000").token
        var otherSecret = AccountHarness.secret
        otherSecret[0] ^= 0x80
        expectAccountError(.unauthenticated) {
            try harness.store.authenticate(token: token, secret: otherSecret, now: harness.now)
        }
    }

    @Test func validlySignedTokenForAnUnknownSessionIsRejected() {
        let harness = AccountHarness()
        let ghost = Session(id: SessionID(high: 1, low: 2), user: UserID(1), device: nil,
                            issuedAt: harness.now, expiresAt: harness.now.adding(milliseconds: 1000))
        let token = SessionToken.make(for: ghost, secret: AccountHarness.secret)
        expectAccountError(.unauthenticated) {
            try harness.store.authenticate(token: token, secret: AccountHarness.secret, now: harness.now)
        }
    }

    @Test func sessionExpiresAfterItsLifetime() throws {
        var harness = AccountHarness(policy: AccountPolicy(sessionLifetime: .seconds(3600)))
        let issue = try harness.requestCode("13800138000")
        let event = try harness.codeLogin("13800138000", code: issue.code)
        let session = try #require(event.openedSession)
        let token = SessionToken.make(for: session, secret: AccountHarness.secret)
        let lastValid = session.issuedAt.adding(milliseconds: 3600 * 1000 - 1)
        #expect(throws: Never.self) {
            try harness.store.authenticate(token: token, secret: AccountHarness.secret, now: lastValid)
        }
        expectAccountError(.sessionExpired) {
            try harness.store.authenticate(token: token, secret: AccountHarness.secret,
                                           now: session.issuedAt.adding(milliseconds: 3600 * 1000))
        }
    }

    @Test func defaultLifetimeIsThirtyDays() throws {
        var harness = AccountHarness()
        let start = harness.now
        let token = try harness.logIn("13800138000").token
        let thirtyDays: Int64 = 30 * 24 * 3600 * 1000
        #expect(throws: Never.self) {
            try harness.store.authenticate(token: token, secret: AccountHarness.secret,
                                           now: start.adding(milliseconds: thirtyDays - 1))
        }
        expectAccountError(.sessionExpired) {
            try harness.store.authenticate(token: token, secret: AccountHarness.secret,
                                           now: start.adding(milliseconds: thirtyDays))
        }
    }

    @Test func logoutRevokesOnlyThatDevice() throws {
        var harness = AccountHarness()
        let (user, phoneToken) = try harness.logIn("13800138000", device: "phone")
        let (sameUser, padToken) = try harness.logIn("13800138000", device: "pad")
        #expect(user == sameUser)
        let phoneSession = try harness.store.authenticate(token: phoneToken, secret: AccountHarness.secret, now: harness.now)
        let padSession = try harness.store.authenticate(token: padToken, secret: AccountHarness.secret, now: harness.now)
        #expect(phoneSession.session != padSession.session)
        #expect(harness.store.activeSessions(of: user, now: harness.now).map(\.device) == ["phone", "pad"])

        let event = try harness.store.decideRevokeSession(user: user, session: phoneSession.session, now: harness.now)
        harness.commit(event)
        #expect(event.recipients == [user])
        expectAccountError(.sessionRevoked) {
            try harness.store.authenticate(token: phoneToken, secret: AccountHarness.secret, now: harness.now)
        }
        #expect(throws: Never.self) {
            try harness.store.authenticate(token: padToken, secret: AccountHarness.secret, now: harness.now)
        }
        #expect(harness.store.activeSessions(of: user, now: harness.now).map(\.device) == ["pad"])
        expectAccountError(.sessionRevoked, field: "session") {
            try harness.store.decideRevokeSession(user: user, session: phoneSession.session, now: harness.now)
        }
    }

    @Test func revokedBeatsExpired() throws {
        var harness = AccountHarness()
        let (user, token) = try harness.logIn("13800138000")
        let session = try harness.store.authenticate(token: token, secret: AccountHarness.secret, now: harness.now)
        harness.commit(try harness.store.decideRevokeSession(user: user, session: session.session, now: harness.now))
        expectAccountError(.sessionRevoked) {
            try harness.store.authenticate(token: token, secret: AccountHarness.secret,
                                           now: harness.now.adding(milliseconds: 365 * 24 * 3600 * 1000))
        }
    }

    @Test func cannotRevokeSomeoneElsesSession() throws {
        var harness = AccountHarness()
        let (_, token) = try harness.logIn("13800138000")
        let intruder = try harness.logIn("13900139000").user
        let session = try harness.store.authenticate(token: token, secret: AccountHarness.secret, now: harness.now)
        expectAccountError(.notFound, field: "session") {
            try harness.store.decideRevokeSession(user: intruder, session: session.session, now: harness.now)
        }
    }

    @Test func sessionIDsPrintAsThirtyTwoHexDigits() {
        #expect(SessionID(high: 0x1, low: 0xabc).description == "0000000000000001" + "0000000000000abc")
    }

    @Test func purgeForgetsOnlyExpiredSessions() throws {
        var harness = AccountHarness(policy: AccountPolicy(sessionLifetime: .seconds(3600)))
        let start = harness.now
        let (user, oldToken) = try harness.logIn("13800138000", device: "old")
        let old = try harness.store.authenticate(token: oldToken, secret: AccountHarness.secret, now: harness.now)
        harness.commit(try harness.store.decideRevokeSession(user: user, session: old.session, now: harness.now))
        harness.now = start.adding(milliseconds: 1800 * 1000)
        let newToken = try harness.logIn("13800138000", device: "new").token
        #expect(harness.store.decideSessionPurge(now: start.adding(milliseconds: 3600 * 1000 - 1)) == nil)

        harness.now = start.adding(milliseconds: 3600 * 1000)
        let purge = try #require(harness.store.decideSessionPurge(now: harness.now))
        harness.commit(purge)
        #expect(purge.recipients.isEmpty)
        #expect(harness.store.state.sessions[old.session] == nil)
        #expect(harness.store.state.accounts[user]?.sessions.count == 1)
        expectAccountError(.sessionExpired) {
            try harness.store.authenticate(token: oldToken, secret: AccountHarness.secret, now: harness.now)
        }
        #expect(throws: Never.self) {
            try harness.store.authenticate(token: newToken, secret: AccountHarness.secret, now: harness.now)
        }
        #expect(harness.store.decideSessionPurge(now: harness.now) == nil)
    }

    @Test func purgeIsBoundedAndDeterministic() throws {
        var harness = AccountHarness(policy: AccountPolicy(sessionLifetime: .seconds(10)))
        for phone in ["13800138000", "13900139000", "13700137000"] { _ = try harness.logIn(phone) }
        let purge = try #require(harness.store.decideSessionPurge(now: harness.now, limit: 2))
        guard case .sessionsPurged(let batch) = purge else {
            Issue.record("expected a purge")
            return
        }
        #expect(batch.sessions.count == 2 && batch.sessions == batch.sessions.sorted())
        harness.commit(purge)
        #expect(harness.store.state.sessions.count == 1)
    }
}
