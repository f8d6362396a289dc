// auth.*: SMS codes, logging in (code or password), resuming a session on a new connection,
// passwords, the list of logged-in devices and logging out (protocol/operations-accounts.md).
//
// Password work (scrypt, tens of milliseconds) runs on `app.hashingQueue` between two visits to
// the accounts queue: a challenge (which hash to check), then the verdict carried back. An
// unknown phone or an account without a password is checked against a decoy hash, so the time
// a reply takes never tells whether an account exists.
//
// Logging a session out (`auth.logout`, `auth.revoke_session`) revokes it in the store; once
// that is durable, every connection using the session, on every loop, is logged out — after
// its `account.logged_out` event has been handed to it, so the other device learns why.
import BangbangCore
import BangbangProtocol
import Crypto
import Dispatch
import Synchronization

package enum AuthOperations {
    package static let all: [Operation] = [requestCode, loginWithCode, loginWithPassword, resume, logout,
                                   setPassword, changePassword, sessions, revokeSession, adminSecret]

    /// Logs the connection in as the built-in administrator with the secret the server wrote to
    /// `<data-dir>/admin-secret` (see AdminSecret.swift): clients on loopback only (through a
    /// proxy, only when the real client is), compared in constant time, read off the loop,
    /// never logged.
    package static let adminSecret = Operation("auth.admin_secret", requiresLogin: false) { context, arguments throws(DomainError) in
        let candidate = try AdminSecretLogin.candidate(arguments)
        let app = context.app
        let session = context.session
        try AdminSecretLogin.requireLoopback(session.channel?.clientOrigin, connectionID: session.connectionID,
                                             metrics: app.metrics, logger: app.logger)
        AdminSecretLogin.check(candidate, dataDirectory: app.configuration.dataDirectory, connectionID: session.connectionID,
                               metrics: app.metrics, logger: app.logger) { result in
            session.post {
                if case .failure(let error) = result { return context.fail(error) }
                session.logInAsBuiltInAdministrator()
                context.succeed(AdminSecretLogin.loggedIn)
            }
        }
    }

    package static let requestCode = Operation("auth.request_code", requiresLogin: false) { context, arguments throws(DomainError) in
        let requester = context.requester
        // Purpose `change_phone` needs a login, and `unauthenticated` comes before any field.
        if requester == nil, arguments.members["purpose"] == .string(CodePurpose.changePhone.rawValue) {
            throw DomainError(.unauthenticated, "Log in before changing your phone number.")
        }
        try arguments.allowOnly(["phone", "purpose"])
        let phone = try arguments.string("phone", maxLength: 32)
        _ = try PhoneNumber(parsing: phone)
        let purpose = try arguments.optionalChoice("purpose", as: CodePurpose.self) ?? .login
        let clientIP = context.clientAddress
        let app = context.app
        app.accounts.perform { owner in
            let now = app.clock()
            var random = SecureRandomNumberGenerator()
            do throws(DomainError) {
                let issue = try owner.store.decideCodeRequest(phone: phone, purpose: purpose, requester: requester,
                                                                 clientIP: clientIP, now: now, using: &random)
                owner.store.apply(.codeIssued(issue))
                app.sms.send(code: issue.code, to: issue.phone.rawValue, purpose: purpose.rawValue)
                var data: [String: JSONValue] = [
                    "phone": .string(issue.phone.rawValue),
                    "expires_at": .integer(issue.expiresAt.rawValue),
                    "retry_after": .integer(Int64(owner.store.policy.codeResendInterval.components.seconds)),
                ]
                if app.sms.revealsCodes { data["dev_code"] = .string(issue.code) }
                context.succeed(.object(data))
            } catch {
                context.fail(error)
            }
        }
    }

    package static let loginWithCode = Operation("auth.login_code", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly(["phone", "code", "device"])
        let phone = try arguments.string("phone", maxLength: 32)
        _ = try PhoneNumber(parsing: phone)
        let code = try arguments.string("code", maxLength: 16)
        let device = try arguments.optionalString("device", maxLength: 64)
        _ = try AccountStore.validatedDevice(device)
        let app = context.app
        app.accounts.perform { owner in
            var random = SecureRandomNumberGenerator()
            let now = app.clock()
            if answeredClaim(context, owner: owner, phone: phone, code: code, now: now) { return }
            let decision = owner.store.decideCodeLogin(phone: phone, code: code, device: device, now: now, using: &random)
            completeLogin(context, owner: owner, decision: decision, now: now)
        }
    }

    /// With several pairs, a login by a phone of this partition that a user of another holds
    /// (AccountStore+PhoneMoves.swift): the code, if one was typed, checked and used up here, and
    /// the node told whose the phone is, `{"claimed_by", "claimed_at"}`, to go on in that user's
    /// partition (PhoneMoves.swift). False, with nothing done, for a phone nobody claims.
    private static func answeredClaim(_ context: OperationContext, owner: AccountsOwner, phone text: String, code: String?,
                                      now: Timestamp) -> Bool {
        guard let phone = try? PhoneNumber(parsing: text), let claim = owner.store.claim(on: phone) else { return false }
        guard case .routed = context.caller else {
            context.fail(DomainError(.storageUnavailable, "this phone's account lives in another partition; log in through a cluster node"))
            return true
        }
        if let code {
            let check = owner.store.proveLoginCode(code, phone: phone, now: now)
            for event in check.throttle { owner.store.apply(event) }
            if let error = check.error {
                context.fail(error)
                return true
            }
        }
        context.succeed(["claimed_by": .integer(Int64(claim.user.rawValue)), "claimed_at": .integer(claim.at.rawValue)])
        return true
    }

    /// Commits a login decision and, once the new session is durable, logs the connection in.
    /// Runs on the accounts queue.
    package static func completeLogin(_ context: OperationContext, owner: AccountsOwner, decision: AccountDecision, now: Timestamp) {
        let app = context.app
        // Throttles are kept in memory only (a restart forgets them): applied, never journaled.
        for event in decision.throttle { owner.store.apply(event) }
        let event: AccountEvent
        switch decision.outcome {
        case .failure(let error): context.fail(error); return
        case .success(let decided): event = decided
        }
        guard let session = event.openedSession else {
            fatalError("internal inconsistency in completeLogin: a login decision without a session")
        }
        let token = SessionToken.make(for: session, secret: app.tokenSecret)
        let isNew: Bool
        if case .registered = event { isNew = true } else { isNew = false }
        if case .routed = context.caller {
            return completeRoutedLogin(context, owner: owner, event: event, user: session.user, token: token, isNew: isNew, now: now)
        }
        // The connection that logs in never receives the `account.login` of its own login: it
        // stops hearing the user's stream before that event is pushed (when it was logged in as
        // them already) and logs in after the push, at a position that includes it.
        let connection = context.session
        // What the closures keep until the login is published: the ids, not the whole session.
        let (user, sessionID) = (session.user, session.id)
        owner.commit(event, at: now, reading: { store in
            do { return UserWire.encode(try store.user(user, viewer: user)) } catch {
                fatalError("internal inconsistency in completeLogin: the logged-in user does not exist")
            }
        }, onDurable: { result in
            switch result {
            case .failure(let error): context.fail(error)
            case .success: connection.post { connection.holdPersonalEvents() }
            }
        }, afterPublish: { view in
            connection.post {
                let state = connection.logIn(as: user, session: sessionID, lastSeenSequence: nil)
                context.succeed(["token": .string(token), "user": view, "is_new": .bool(isNew),
                                 "seq": .integer(Int64(state.sequence))])
            }
        })
    }

    package static let resume = Operation("auth.resume", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly(["token", "last_seq"])
        let token = try arguments.string("token", maxLength: 256)
        let lastSeen = try arguments.optionalInteger("last_seq", in: 0...Int64.max).map { UInt64($0) }
        let app = context.app
        app.accounts.perform { owner in
            do throws(DomainError) {
                let authenticated = try owner.store.authenticate(token: token, secret: app.tokenSecret, now: app.clock())
                let view = UserWire.encode(try owner.store.user(authenticated.user, viewer: authenticated.user))
                if case .routed = context.caller {
                    return context.succeed(.object(routedStreamPosition(of: authenticated.user, after: lastSeen ?? 0, app: app)
                        .merging(["user": view]) { $1 }))
                }
                context.session.post {
                    let state = context.session.logIn(as: authenticated.user, session: authenticated.session,
                                                      lastSeenSequence: lastSeen ?? 0)
                    context.succeed(["user": view, "seq": .integer(Int64(state.sequence)), "resync": .bool(state.resync)])
                }
            } catch {
                context.fail(error)
            }
        }
    }

    /// A login run for another node's connection (RoutedOperations.swift): committed as any
    /// login, and answered once its `account.login` is numbered, with the stream's last number,
    /// from which that node follows the user's stream (FollowedStreams.swift). Runs on the
    /// accounts queue.
    private static func completeRoutedLogin(_ context: OperationContext, owner: AccountsOwner, event: AccountEvent,
                                            user: UserID, token: String, isNew: Bool, now: Timestamp) {
        let app = context.app
        owner.commit(event, at: now, reading: { store in
            do { return UserWire.encode(try store.user(user, viewer: user)) } catch {
                fatalError("internal inconsistency in completeRoutedLogin: the logged-in user does not exist")
            }
        }, onDurable: { result in
            if case .failure(let error) = result { context.fail(error) }
        }, afterPublish: { view in
            let last = app.publisher.accounts.streams.lastSequence(of: user)
            context.succeed(["token": .string(token), "user": view, "is_new": .bool(isNew), "seq": .integer(Int64(last))])
        })
    }

    /// Where a device of `user` that last saw `after` stands in the stream, as a connection's
    /// login would find it (`PersonalStreams.replay`): the stream's last number, and whether the
    /// events after `after` are no longer all kept. The node holding the connection replays them.
    private static func routedStreamPosition(of user: UserID, after: UInt64, app: Application) -> [String: JSONValue] {
        let replay = app.publisher.accounts.streams.replay(for: user, after: after, now: app.clock()) { _ in }
        switch replay {
        case .events(_, let last): return ["seq": .integer(Int64(last)), "resync": .bool(false)]
        case .resync(let last): return ["seq": .integer(Int64(last)), "resync": .bool(true)]
        }
    }

    package static let logout = Operation("auth.logout") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        guard let session = context.sessionID else { throw DomainError(.unauthenticated, "not logged in") }
        revoke(session, context: context)
    }

    package static let revokeSession = Operation("auth.revoke_session") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["session_id"])
        let session = try SessionWire.decodeID(try arguments.string("session_id", maxLength: 64))
        revoke(session, context: context)
    }

    package static let sessions = Operation("auth.sessions") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let user = context.user
        let current = context.sessionID
        let app = context.app
        app.accounts.perform { owner in
            let list = owner.store.activeSessions(of: user, now: app.clock())
            // This connection's session may have just been revoked from another device, its
            // logout still on the way to this connection's loop: the store is the truth.
            if let current, !list.contains(where: { $0.id == current }) {
                context.fail(DomainError(.unauthenticated, "this session was logged out; log in again"))
                return
            }
            context.succeed(["sessions": .array(list.map { SessionWire.encode($0, isCurrent: $0.id == current) })])
        }
    }

    // MARK: Passwords

    package static let loginWithPassword = Operation("auth.login_password", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly(["phone", "password", "device"])
        let phone = try arguments.string("phone", maxLength: 32)
        _ = try PhoneNumber(parsing: phone)
        let password = try arguments.string("password", maxLength: PasswordRules.length.upperBound)
        let device = try arguments.optionalString("device", maxLength: 64)
        _ = try AccountStore.validatedDevice(device)
        let app = context.app
        app.accounts.perform { owner in
            if answeredClaim(context, owner: owner, phone: phone, code: nil, now: app.clock()) { return }
            let challenge: PasswordChallenge
            do throws(DomainError) {
                challenge = try owner.store.passwordChallenge(phone: phone, now: app.clock())
            } catch {
                context.fail(error)
                return
            }
            app.hashingQueue.async {
                // Fetched on every path, so the one-time cost of making it falls on whichever
                // login comes first, not only on a login for an unknown phone.
                let decoy = decoyHash(app)
                let matches: Bool
                if let stored = challenge.passwordHash {
                    matches = app.passwordHasher.verify(password: password, against: stored)
                } else {
                    _ = app.passwordHasher.verify(password: password, against: decoy)
                    matches = false
                }
                app.accounts.perform { owner in
                    var random = SecureRandomNumberGenerator()
                    let now = app.clock()
                    let decision = owner.store.decidePasswordLogin(challenge, passwordMatches: matches, device: device,
                                                                      now: now, using: &random)
                    completeLogin(context, owner: owner, decision: decision, now: now)
                }
            }
        }
    }

    package static let setPassword = Operation("auth.set_password") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["password"])
        let password = try arguments.string("password", maxLength: PasswordRules.length.upperBound)
        try AccountStore.validatePassword(password)
        let user = context.user
        let app = context.app
        app.hashingQueue.async {
            let hash = app.passwordHasher.hash(password: password)
            app.accounts.perform { owner in
                let now = app.clock()
                do throws(DomainError) {
                    let event = try owner.store.decideSetPassword(user: user, passwordHash: hash, now: now)
                    commit(event, on: owner, at: now, context: context)
                } catch {
                    context.fail(error)
                }
            }
        }
    }

    package static let changePassword = Operation("auth.change_password") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["old_password", "new_password"])
        let old = try arguments.string("old_password", maxLength: PasswordRules.length.upperBound)
        let new = try arguments.string("new_password", maxLength: PasswordRules.length.upperBound)
        try AccountStore.validatePassword(new, field: "new_password")
        let user = context.user
        let app = context.app
        app.accounts.perform { owner in
            let challenge: PasswordChallenge
            do throws(DomainError) {
                challenge = try owner.store.passwordChangeChallenge(user: user, now: app.clock())
            } catch {
                context.fail(error)
                return
            }
            app.hashingQueue.async {
                // The challenge of a password change always carries a hash (the domain refuses
                // accounts without one with `password_not_set`).
                let matches = challenge.passwordHash.map { app.passwordHasher.verify(password: old, against: $0) } ?? false
                // Hashed even after a wrong old password, so both answers take the same time.
                let newHash = app.passwordHasher.hash(password: new)
                app.accounts.perform { owner in
                    let now = app.clock()
                    let decision = owner.store.decideChangePassword(challenge, oldPasswordMatches: matches,
                                                                       newPasswordHash: newHash, now: now)
                    for event in decision.throttle { owner.store.apply(event) }
                    switch decision.outcome {
                    case .failure(let error): context.fail(error)
                    case .success(let event): commit(event, on: owner, at: now, context: context)
                    }
                }
            }
        }
    }

    /// A scrypt record of a random password, made once per process with the server's own
    /// parameters, so checking against it costs what checking a real password costs.
    private static let decoy = Mutex<String?>(nil)

    /// Runs on the hashing queue (it may hash).
    static func decoyHash(_ app: Application) -> String {
        if let hash = decoy.withLock({ $0 }) { return hash }
        let made = app.passwordHasher.hash(password: Base64.encode(SecureRandom.bytes(count: 18)))
        return decoy.withLock { stored in
            if let stored { return stored }
            stored = made
            return made
        }
    }

    // MARK: Shared by the account operations

    /// Commits a plain account event and replies, once it is durable, with what `reply` read
    /// from the store right after the apply (so the reply shows the change). Runs on the
    /// accounts queue.
    package static func commit(_ event: AccountEvent, on owner: AccountsOwner, at now: Timestamp, context: OperationContext,
                       reply: (AccountStore) -> JSONValue = { _ in [:] }) {
        owner.commit(event, at: now, reading: reply) { result in
            switch result {
            case .success(let data): context.succeed(data)
            case .failure(let error): context.fail(error)
            }
        }
    }

    /// Logs out `session` of the caller (their current one, or another device's), then every
    /// connection using it.
    private static func revoke(_ session: SessionID, context: OperationContext) {
        let user = context.user
        let app = context.app
        app.accounts.perform { owner in
            do throws(DomainError) {
                let now = app.clock()
                let event = try owner.store.decideRevokeSession(user: user, session: session, now: now)
                owner.commit(event, at: now, onDurable: { result in
                    if case .failure(let error) = result { context.fail(error); return }
                    // Another node's connection: that node logs it out once it hears back, and
                    // its other connections of the session when their `account.logged_out` comes.
                    guard case .session(let connection) = context.caller else { return context.succeed() }
                    connection.post {
                        // The asking connection is logged out before it hears back, so its next
                        // request already finds it logged out.
                        if connection.sessionID == session { connection.logOut() }
                        context.succeed()
                    }
                }, afterPublish: {
                    // The `account.logged_out` push is already in the outbox of every loop that
                    // holds a connection of the user, so each connection using the session is
                    // sent it before it is logged out.
                    for registry in app.publisher.accounts.registries(holding: user) {
                        registry.post {
                            for connection in registry.sessions(of: user) where connection.sessionID == session {
                                connection.logOut()
                            }
                        }
                    }
                })
            } catch {
                context.fail(error)
            }
        }
    }
}
