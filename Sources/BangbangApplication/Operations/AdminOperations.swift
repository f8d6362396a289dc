// admin.*: the administrators' tools — reviewing runner verifications, reading feedback,
// granting and revoking administration, looking users up (protocol/operations-accounts.md).
// Every check of who may do this is the domain's (`forbidden` for anyone else), made on the
// accounts queue together with the work, so a grant revoked a moment ago is already in force.
// A connection logged in with the admin secret acts as the built-in administrator (user 0,
// BuiltInAdministrator.swift) and takes the same paths; every change an administrator makes
// is logged with the connection and request ids.
import BangbangCore
import BangbangProtocol
import SocketServer

package enum AdminOperations {
    package static let all: [Operation] = [pendingVerifications, decideVerification, listFeedback, grantAdmin, revokeAdmin, user,
                                   order, stats]

    /// Decisions an administrator can make on a verification.
    package enum Decision: String, CaseIterable, Sendable {
        case approve
        case reject
    }

    package static let pendingVerifications = Operation("admin.pending_verifications") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let viewer = actor(context)
        context.app.accounts.perform { owner in
            do throws(DomainError) {
                let users = if let viewer {
                    try vouched(owner.store, for: context).pendingVerifications(viewer: viewer)
                } else {
                    BuiltInAdministrator.pendingVerifications(owner.store)
                }
                context.succeed(["users": .array(users.map(UserWire.encode))])
            } catch {
                context.fail(error)
            }
        }
    }

    static let decideVerification = Operation("admin.decide_verification") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["user_id", "decision", "reason"])
        let subject = try userID(arguments)
        let decision = try arguments.choice("decision", as: Decision.self)
        let reason = try arguments.optionalString("reason", maxLength: 400)
        switch decision {
        case .approve where reason != nil:
            throw DomainError(.invalidField, "reason is only for a rejection", field: "reason")
        case .reject where reason == nil:
            throw DomainError(.invalidField, "reason is required to reject: the applicant reads it", field: "reason")
        case .reject:
            _ = try RunnerVerification.validatedRejectionReason(reason ?? "")
        case .approve: break
        }
        administer(context, subject: subject) { store, administrator, now throws(DomainError) in
            guard let administrator else {
                return try BuiltInAdministrator.decideVerification(store, user: subject, reason: reason, now: now)
            }
            switch decision {
            case .approve: return try store.decideVerificationApproval(administrator: administrator, user: subject, now: now)
            case .reject: return try store.decideVerificationRejection(administrator: administrator, user: subject,
                                                                        reason: reason ?? "", now: now)
            }
        }
    }

    /// `admin.list_feedback`'s fields: the id to page below (nil: from the newest) and the page size.
    package static func feedbackPage(_ arguments: Arguments) throws(DomainError) -> (before: UInt64?, limit: Int) {
        try arguments.allowOnly(["before", "limit"])
        return (try arguments.optionalInteger("before", in: 1...Int64.max).map { UInt64($0) },
                Int(try arguments.optionalInteger("limit", in: 1...100) ?? 20))
    }

    package static let listFeedback = Operation("admin.list_feedback") { context, arguments throws(DomainError) in
        let (before, limit) = try feedbackPage(arguments)
        let viewer = actor(context)
        context.app.accounts.perform { owner in
            do throws(DomainError) {
                guard let viewer else {
                    let page = BuiltInAdministrator.feedbackPage(owner.store, before: before, limit: limit)
                    context.succeed(page.map(FeedbackWire.encode) ?? ["feedback": []])
                    return
                }
                context.succeed(FeedbackWire.encode(try vouched(owner.store, for: context).feedbackPage(viewer: viewer, before: before,
                                                                                                      limit: limit)))
            } catch {
                context.fail(error)
            }
        }
    }

    static let grantAdmin = administratorChange("admin.grant_admin", isGranted: true)
    static let revokeAdmin = administratorChange("admin.revoke_admin", isGranted: false)

    /// Granting and revoking administration: one request (`user_id`), decided by the built-in
    /// administrator's rules or the domain's, as `isGranted` says.
    private static func administratorChange(_ name: String, isGranted: Bool) -> Operation {
        Operation(name) { context, arguments throws(DomainError) in
            try arguments.allowOnly(["user_id"])
            let subject = try userID(arguments)
            administer(context, subject: subject) { store, administrator, now throws(DomainError) in
                guard let administrator else {
                    return try BuiltInAdministrator.decideAdministrator(store, user: subject, isGranted: isGranted, now: now)
                }
                return isGranted
                    ? try store.decideAdministratorGrant(by: administrator, to: subject, now: now)
                    : try store.decideAdministratorRevocation(by: administrator, from: subject, now: now)
            }
        }
    }

    package static let user = Operation("admin.user") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["user_id", "phone"])
        let id = try arguments.optionalInteger("user_id", in: 1...Int64.max).map { UserID(rawValue: UInt64($0)) }
        let phone = try arguments.optionalString("phone", maxLength: 32)
        if let phone { _ = try PhoneNumber(parsing: phone) }
        guard (id == nil) != (phone == nil) else {
            throw DomainError(.invalidField, "give exactly one of user_id and phone", field: id == nil ? "user_id" : "phone")
        }
        let viewer = actor(context)
        context.app.accounts.perform { owner in
            do throws(DomainError) {
                let store = vouched(owner.store, for: context)
                // A phone a user of another pair moved to: the node looks the user up there (PairAdministration).
                if let phone, case .routed = context.caller, viewer.map(store.isAdministrator) ?? true,
                   let claim = store.claim(on: try PhoneNumber(parsing: phone)) {
                    return context.succeed(["claimed_by": .integer(Int64(claim.user.rawValue))])
                }
                guard let viewer else {
                    let found = if let id {
                        try BuiltInAdministrator.user(store, id)
                    } else {
                        try BuiltInAdministrator.user(store, phone: phone ?? "")
                    }
                    context.succeed(["user": UserWire.encode(found)])
                    return
                }
                guard store.isAdministrator(viewer) else { throw DomainError(.forbidden, "Only administrators may do this.") }
                let subject: UserID
                if let id {
                    subject = id
                } else {
                    guard let found = store.state.userByPhone[try PhoneNumber(parsing: phone ?? "")] else {
                        throw DomainError(.notFound, "No user has this phone number.", field: "phone")
                    }
                    subject = found
                }
                context.succeed(["user": UserWire.encode(try store.user(subject, viewer: viewer))])
            } catch {
                context.fail(error)
            }
        }
    }

    /// Any order in full (as its publisher sees it: addresses, cancel code, runner), for support;
    /// from the archive once its shard no longer holds it.
    static let order = Operation("admin.order") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["order_id"])
        let id = try OrderOperations.orderID(arguments)
        let app = context.app
        asAdministrator(context) { _ in
            // `forbidden` before `not_found`: a user who is not an administrator learns nothing
            // about which orders exist.
            guard let owner = OrderOperations.owner(of: id, in: app) else {
                context.fail(DomainError(.notFound, "no such order"))
                return
            }
            app.orderView(id, on: owner, viewer: { $0.publisher }) { result in
                context.reply(result.map { ["order": OrderWire.encode($0)] })
            }
        }
    }

    /// The console's overview: connections, who is online, the boards, publishes in the last
    /// minute, verifications waiting. Numbers of a moment, gathered from every owner and loop.
    package static let stats = Operation("admin.stats") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let app = context.app
        asAdministrator(context) { accounts in
            let pending = BuiltInAdministrator.pendingVerifications(accounts.store).count
            BoardOperations.gatherStats(app) { stats in
                let now = app.clock()
                var types: [String: JSONValue] = [:]
                var publishedTotal = 0
                for type in OrderType.allCases {
                    let published = app.recentPublishes.count(type, at: now)
                    publishedTotal += published
                    types[type.rawValue] = ["open": .integer(Int64(stats.open[type] ?? 0)),
                                            "runners_online": .integer(Int64(stats.runnersOnline[type]?.count ?? 0)),
                                            "published_last_minute": .integer(Int64(published))]
                }
                let counted = app.metrics.connections
                let connections = counted.connectionsOpened.current - counted.connectionsClosed.current
                // With every node's sessions reported (a cluster whose nodes run their own).
                let elsewhere = app.runnersElsewhere.sessions(at: EventLoop.now)
                context.succeed(["connections": .integer(Int64(max(0, connections) + elsewhere.connections)),
                                 "users_online": .integer(Int64(stats.usersOnline.count + elsewhere.users)),
                                 "pending_verifications": .integer(Int64(pending)),
                                 "published_last_minute": .integer(Int64(publishedTotal)),
                                 "types": .object(types)])
            }
        }
    }

    // MARK: Helpers

    /// The store as this request's administrator uses it: a routed actor whose own account
    /// partition vouched for them is taken at its word, since who administers is recorded there
    /// and this partition cannot read it.
    private static func vouched(_ store: AccountStore, for context: OperationContext) -> AccountStore {
        guard case .routed(let call) = context.caller, let actor = call.actor, actor.isVouchedAdministrator,
              !actor.isBuiltInAdministrator else { return store }
        return store.vouching(for: actor.user)
    }

    /// The administrator making the request: a user, or nil for the built-in administrator, on a
    /// connection of this server's own or routed from a node that took its admin secret.
    private static func actor(_ context: OperationContext) -> UserID? {
        if case .session(let session) = context.caller, session.isBuiltInAdministrator { return nil }
        if case .routed(let call) = context.caller, call.actor?.isBuiltInAdministrator == true { return nil }
        return context.user
    }

    private static func userID(_ arguments: Arguments) throws(DomainError) -> UserID {
        UserID(rawValue: UInt64(try arguments.integer("user_id", in: 1...Int64.max)))
    }

    private static func userReply(_ user: UserID, store: AccountStore, viewer: UserID?) -> JSONValue {
        do {
            return ["user": UserWire.encode(try store.user(user, viewer: viewer ?? user))]
        } catch {
            fatalError("internal inconsistency in admin operations: user \(user) vanished after a change")
        }
    }

    /// Runs `body` on the accounts queue once the request's administrator is one there (the
    /// built-in one always is); anyone else is answered `forbidden`, before anything is read.
    private static func asAdministrator(_ context: OperationContext, _ body: @escaping @Sendable (AccountsOwner) -> Void) {
        let viewer = actor(context)
        context.app.accounts.perform { accounts in
            guard viewer.map(vouched(accounts.store, for: context).isAdministrator) ?? true else {
                context.fail(DomainError(.forbidden, "Only administrators may do this."))
                return
            }
            body(accounts)
        }
    }

    /// Decides an administrator's command on the accounts queue, applies and commits it.
    /// `decide` gets the administrator (nil: the built-in one); the reply is the subject as
    /// the administrator now sees them.
    private static func administer(_ context: OperationContext, subject: UserID,
                                   decide: @escaping @Sendable (AccountStore, UserID?, Timestamp) throws(DomainError) -> AccountEvent) {
        let administrator = actor(context)
        let app = context.app
        let connection = if case .session(let session) = context.caller { String(session.connectionID) } else { "routed" }
        let requestID = RequestAdmission.describe(context.requestID)
        app.accounts.perform { owner in
            do throws(DomainError) {
                let now = app.clock()
                let event = try decide(vouched(owner.store, for: context), administrator, now)
                app.logger.info("admin_action", ["connection.id": connection, "request.id": requestID,
                                                 "op": context.operation, "subject": subject.rawValue,
                                                 "administrator": (administrator ?? BuiltInAdministrator.id).rawValue])
                AuthOperations.commit(event, on: owner, at: now, context: context) { changed in
                    userReply(subject, store: vouched(changed, for: context), viewer: administrator)
                }
            } catch {
                context.fail(error)
            }
        }
    }
}
