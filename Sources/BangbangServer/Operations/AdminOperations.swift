// admin.*: the administrators' tools — reviewing runner verifications, reading feedback,
// granting and revoking administration, looking users up (protocol/operations-accounts.md).
// Every check of who may do this is the domain's (`forbidden` for anyone else), made on the
// accounts queue together with the work, so a grant revoked a moment ago is already in force.
import BangbangCore
import BangbangProtocol

enum AdminOperations {
    static let all: [Operation] = [pendingVerifications, decideVerification, listFeedback, grantAdmin, revokeAdmin, user]

    /// Decisions an administrator can make on a verification.
    enum Decision: String, CaseIterable, Sendable {
        case approve
        case reject
    }

    static let pendingVerifications = Operation("admin.pending_verifications") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let viewer = context.user
        context.app.accounts.perform { executor in
            do throws(DomainError) {
                let users = try executor.store.pendingVerifications(viewer: viewer)
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
        default: break
        }
        administer(context) { store, administrator, now throws(DomainError) in
            switch decision {
            case .approve: try store.decideVerificationApproval(administrator: administrator, user: subject, now: now)
            case .reject: try store.decideVerificationRejection(administrator: administrator, user: subject,
                                                                 reason: reason ?? "", now: now)
            }
        } reply: { store, administrator in
            userReply(subject, store: store, viewer: administrator)
        }
    }

    static let listFeedback = Operation("admin.list_feedback") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["before", "limit"])
        let before = try arguments.optionalInteger("before", in: 1...Int64.max).map { UInt64($0) }
        let limit = Int(try arguments.optionalInteger("limit", in: 1...100) ?? 20)
        let viewer = context.user
        context.app.accounts.perform { executor in
            do throws(DomainError) {
                context.succeed(FeedbackWire.encode(try executor.store.feedbackPage(viewer: viewer, before: before, limit: limit)))
            } catch {
                context.fail(error)
            }
        }
    }

    static let grantAdmin = Operation("admin.grant_admin") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["user_id"])
        let subject = try userID(arguments)
        administer(context) { store, administrator, now throws(DomainError) in
            try store.decideAdministratorGrant(by: administrator, to: subject, now: now)
        } reply: { store, administrator in
            userReply(subject, store: store, viewer: administrator)
        }
    }

    static let revokeAdmin = Operation("admin.revoke_admin") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["user_id"])
        let subject = try userID(arguments)
        administer(context) { store, administrator, now throws(DomainError) in
            try store.decideAdministratorRevocation(by: administrator, from: subject, now: now)
        } reply: { store, administrator in
            userReply(subject, store: store, viewer: administrator)
        }
    }

    static let user = Operation("admin.user") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["user_id", "phone"])
        let id = try arguments.optionalInteger("user_id", in: 1...Int64.max).map { UserID(rawValue: UInt64($0)) }
        let phone = try arguments.optionalString("phone", maxLength: 32)
        guard (id == nil) != (phone == nil) else {
            throw DomainError(.invalidField, "give exactly one of user_id and phone", field: id == nil ? "user_id" : "phone")
        }
        let viewer = context.user
        context.app.accounts.perform { executor in
            do throws(DomainError) {
                let store = executor.store
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

    // MARK: Helpers

    private static func userID(_ arguments: Arguments) throws(DomainError) -> UserID {
        UserID(rawValue: UInt64(try arguments.integer("user_id", in: 1...Int64.max)))
    }

    private static func userReply(_ user: UserID, store: AccountStore, viewer: UserID) -> JSONValue {
        do {
            return ["user": UserWire.encode(try store.user(user, viewer: viewer))]
        } catch {
            fatalError("internal inconsistency in admin operations: user \(user) vanished after a change")
        }
    }

    /// Decides an administrator's command on the accounts queue, applies and commits it.
    private static func administer(_ context: OperationContext,
                                   decide: @escaping @Sendable (AccountStore, UserID, Timestamp) throws(DomainError) -> AccountEvent,
                                   reply: @escaping @Sendable (AccountStore, UserID) -> JSONValue) {
        let administrator = context.user
        let app = context.app
        app.accounts.perform { executor in
            do throws(DomainError) {
                let now = app.clock()
                let event = try decide(executor.store, administrator, now)
                AuthOperations.commit(event, on: executor, at: now, context: context) { store in reply(store, administrator) }
            } catch {
                context.fail(error)
            }
        }
    }
}
