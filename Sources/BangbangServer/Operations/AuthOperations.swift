// auth.*: SMS codes, logging in, resuming a session on a new connection, logging out
// (protocol/operations.md, "Accounts").
import BangbangCore
import BangbangProtocol
import Crypto

enum AuthOperations {
    static let all: [Operation] = [requestCode, loginWithCode, resume, logout]

    static let requestCode = Operation("auth.request_code", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly(["phone", "purpose"])
        let phone = try arguments.string("phone", maxLength: 32)
        let purpose = try arguments.optionalChoice("purpose", as: CodePurpose.self) ?? .login
        let requester = context.session.user
        let clientIP = context.session.channel?.connection.remoteAddress.host ?? "unknown"
        let app = context.app
        app.accounts.perform { executor in
            let now = app.clock()
            var random = SecureRandomNumberGenerator()
            do throws(DomainError) {
                let issue = try executor.store.decideCodeRequest(phone: phone, purpose: purpose, requester: requester,
                                                                 clientIP: clientIP, now: now, using: &random)
                executor.store.apply(.codeIssued(issue))
                app.sms.send(code: issue.code, to: issue.phone.rawValue, purpose: purpose.rawValue)
                var data: [String: JSONValue] = [
                    "phone": .string(issue.phone.rawValue),
                    "expires_at": .integer(issue.expiresAt.rawValue),
                    "retry_after": .integer(Int64(executor.store.policy.codeResendInterval.components.seconds)),
                ]
                if app.sms.revealsCodes { data["dev_code"] = .string(issue.code) }
                context.succeed(.object(data))
            } catch {
                context.fail(error)
            }
        }
    }

    static let loginWithCode = Operation("auth.login_code", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly(["phone", "code", "device"])
        let phone = try arguments.string("phone", maxLength: 32)
        let code = try arguments.string("code", maxLength: 16)
        let device = try arguments.optionalString("device", maxLength: 64)
        let app = context.app
        app.accounts.perform { executor in
            var random = SecureRandomNumberGenerator()
            let now = app.clock()
            let decision = executor.store.decideCodeLogin(phone: phone, code: code, device: device, now: now, using: &random)
            completeLogin(context, executor: executor, decision: decision, now: now)
        }
    }

    /// Applies a login decision and, once the new session is durable, logs the connection in.
    /// Runs on the accounts queue.
    static func completeLogin(_ context: OperationContext, executor: AccountsExecutor, decision: AccountDecision, now: Timestamp) {
        let app = context.app
        for event in decision.throttle { executor.store.apply(event) }
        let event: AccountEvent
        switch decision.outcome {
        case .failure(let error): context.fail(error); return
        case .success(let decided): event = decided
        }
        executor.store.apply(event)
        guard let session = event.openedSession else {
            fatalError("internal inconsistency in completeLogin: a login decision without a session")
        }
        let token = SessionToken.make(for: session, secret: app.tokenSecret)
        let view: JSONValue
        do { view = UserWire.encode(try executor.store.user(session.user, viewer: session.user)) } catch {
            fatalError("internal inconsistency in completeLogin: the logged-in user does not exist")
        }
        let isNew: Bool
        if case .registered = event { isNew = true } else { isNew = false }
        app.commit(.account(event), applied: .account(event, at: now)) { result in
            switch result {
            case .failure(let error): context.fail(error)
            case .success:
                context.session.loop?.execute {
                    let state = context.session.logIn(as: session.user, session: session.id, lastSeenSequence: nil)
                    context.succeed(["token": .string(token), "user": view, "is_new": .bool(isNew),
                                     "seq": .integer(Int64(state.sequence))])
                }
            }
        }
    }

    static let resume = Operation("auth.resume", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly(["token", "last_seq"])
        let token = try arguments.string("token", maxLength: 256)
        let lastSeen = try arguments.optionalInteger("last_seq", in: 0...Int64.max).map { UInt64($0) }
        let app = context.app
        app.accounts.perform { executor in
            do throws(DomainError) {
                let authenticated = try executor.store.authenticate(token: token, secret: app.tokenSecret, now: app.clock())
                let view = UserWire.encode(try executor.store.user(authenticated.user, viewer: authenticated.user))
                context.session.loop?.execute {
                    let state = context.session.logIn(as: authenticated.user, session: authenticated.session,
                                                      lastSeenSequence: lastSeen ?? 0)
                    context.succeed(["user": view, "seq": .integer(Int64(state.sequence)), "resync": .bool(state.resync)])
                }
            } catch {
                context.fail(error)
            }
        }
    }

    static let logout = Operation("auth.logout") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        guard let session = context.session.sessionID else { throw DomainError(.unauthenticated, "not logged in") }
        let user = context.user
        let app = context.app
        app.accounts.perform { executor in
            do throws(DomainError) {
                let now = app.clock()
                let event = try executor.store.decideRevokeSession(user: user, session: session, now: now)
                executor.store.apply(event)
                app.commit(.account(event), applied: .account(event, at: now)) { result in
                    if case .failure(let error) = result { context.fail(error); return }
                    context.session.loop?.execute {
                        context.session.logOut()
                        context.succeed()
                    }
                }
            } catch {
                context.fail(error)
            }
        }
    }
}
