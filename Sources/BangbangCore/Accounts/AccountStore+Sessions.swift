// Authenticating tokens, listing and revoking sessions.

extension AccountStore {
    /// The session `token` speaks for. The signature is checked first, in constant time, so a
    /// forged token costs one HMAC and no lookup. Errors: `unauthenticated` (malformed, forged,
    /// wrong secret, unknown session), `session_revoked`, `session_expired`.
    public func authenticate(token: String, secret: [UInt8], now: Timestamp) throws(DomainError) -> AuthenticatedSession {
        guard let claims = SessionToken.verifiedClaims(of: token, secret: secret) else {
            throw DomainError(.unauthenticated, "Please log in.")
        }
        // Sessions are kept with their users, and the signed token names its user.
        guard let account = state.record(claims.user), let index = account.sessionIndex(claims.session),
              account.sessions[index].issuedAt == claims.issuedAt
        else {
            // A token we signed whose session was purged: if it is old enough, that is why.
            let lifetime = AccountPolicy.milliseconds(policy.sessionLifetime)
            if now >= claims.issuedAt.adding(milliseconds: lifetime) {
                throw DomainError(.sessionExpired, "Your login has expired; please log in again.")
            }
            throw DomainError(.unauthenticated, "Please log in.")
        }
        let session = account.sessions[index]
        if session.isRevoked {
            throw DomainError(.sessionRevoked, "You have logged out on this device; please log in again.")
        }
        guard now < session.expiresAt else {
            throw DomainError(.sessionExpired, "Your login has expired; please log in again.")
        }
        return AuthenticatedSession(user: claims.user, session: session.id)
    }

    /// Logs out one of `user`'s sessions (this device, or another one from the device list).
    public func decideRevokeSession(user: UserID, session id: SessionID, now: Timestamp) throws(DomainError) -> AccountEvent {
        guard let account = state.record(user), let index = account.sessionIndex(id) else {
            throw DomainError(.notFound, "No such session.", field: "session")
        }
        guard !account.sessions[index].isRevoked else {
            throw DomainError(.sessionRevoked, "This session has already been logged out.", field: "session")
        }
        return .sessionRevoked(.init(user: user, session: id, at: now))
    }

    /// `user`'s sessions that are neither revoked nor expired at `now`, oldest first.
    public func activeSessions(of user: UserID, now: Timestamp) -> [Session] {
        guard let account = state.record(user) else { return [] }
        return account.sessions.compactMap { session in
            guard !session.isRevoked, now < session.expiresAt else { return nil }
            return session.session(user: user)
        }
    }

    /// The most sessions one purge forgets: its journal record stays well under a NATS message
    /// (about 310 KiB, 420 KiB in base64), so a cluster's stream can store it and read it back.
    public static let sessionsPurgedAtOnce = 10_000

    /// Housekeeping the server runs now and then (say hourly): forgets up to `limit` sessions
    /// that expired at or before `now`, revoked or not. Nil when there is nothing to forget.
    /// Their tokens then answer `session_expired` from the issue time they carry.
    public func decideSessionPurge(now: Timestamp, limit: Int = AccountStore.sessionsPurgedAtOnce) -> AccountEvent? {
        precondition(limit > 0, "purge limit must be positive")
        var expired: [SessionID] = []
        for (_, account) in state.accounts.records {
            for session in account.sessions where session.expiresAt <= now { expired.append(session.id) }
        }
        guard !expired.isEmpty else { return nil }
        // Sorted so the event does not depend on dictionary order.
        expired.sort()
        return .sessionsPurged(.init(sessions: Array(expired.prefix(limit)), at: now))
    }
}
