// Authenticating tokens, listing and revoking sessions.

extension AccountStore {
    /// The session `token` speaks for. The signature is checked first, in constant time, so a
    /// forged token costs one HMAC and no lookup. Errors: `unauthenticated` (malformed, forged,
    /// wrong secret, unknown session), `session_revoked`, `session_expired`.
    public func authenticate(token: String, secret: [UInt8], now: Timestamp) throws(DomainError) -> AuthenticatedSession {
        guard let claims = SessionToken.verifiedClaims(of: token, secret: secret),
              let session = state.sessions[claims.session],
              session.user == claims.user, session.issuedAt == claims.issuedAt
        else {
            throw DomainError(.unauthenticated, "Please log in.")
        }
        if session.isRevoked {
            throw DomainError(.sessionRevoked, "You have logged out on this device; please log in again.")
        }
        guard now < session.expiresAt else {
            throw DomainError(.sessionExpired, "Your login has expired; please log in again.")
        }
        return AuthenticatedSession(user: session.user, session: session.id)
    }

    /// Logs out one of `user`'s sessions (this device, or another one from the device list).
    public func decideRevokeSession(user: UserID, session id: SessionID, now: Timestamp) throws(DomainError) -> AccountEvent {
        guard let session = state.sessions[id], session.user == user else {
            throw DomainError(.notFound, "No such session.", field: "session")
        }
        guard !session.isRevoked else {
            throw DomainError(.sessionRevoked, "This session has already been logged out.", field: "session")
        }
        return .sessionRevoked(.init(user: user, session: id, at: now))
    }

    /// `user`'s sessions that are neither revoked nor expired at `now`, oldest first.
    public func activeSessions(of user: UserID, now: Timestamp) -> [Session] {
        guard let account = state.accounts[user] else { return [] }
        return account.sessions.compactMap { id in
            guard let session = state.sessions[id], !session.isRevoked, now < session.expiresAt else { return nil }
            return session
        }
    }
}
