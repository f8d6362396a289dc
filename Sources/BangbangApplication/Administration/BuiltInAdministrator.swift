// The built-in administrator: the server operator, acting through `bangbang admin` (over `/ws`
// with the admin secret, or on a stopped server's data directory). It has no account, so it
// appears in the journal as user 0 (ids start at 1, so 0 is never a person): a verification it
// decided shows `decided_by` 0, a grant it made `granted_by` 0.
//
// The domain authorizes administrators by account. So that its rules (a verification must be
// pending, a rejection reason must be valid, a configured administrator cannot be revoked…)
// stay in one place, the queries and verification decisions run the domain's own methods on a
// copy of the store in which the *subject* counts as an administrator (a copy of a value with
// copy-on-write storage: only the policy is copied), then put user 0 in the decider's place.
// Administrator grants are checked here and built by decoding (their initializers are the
// domain's own); a unit test pins that to the domain's encoding.
import BangbangCore
import Foundation

package enum BuiltInAdministrator {
    package static let id = UserID(rawValue: 0)

    /// The store as seen by someone for whom `proxy` is an administrator.
    private static func store(_ store: AccountStore, actingThrough proxy: UserID) -> AccountStore {
        var scratch = store
        if let phone = store.state.accounts[proxy]?.phone { scratch.policy.administratorPhones.insert(phone) }
        return scratch
    }

    /// Applications waiting for review, oldest first.
    package static func pendingVerifications(_ accounts: AccountStore) -> [UserView] {
        guard let proxy = accounts.state.accounts.keys.min() else { return [] }
        do {
            var views = try store(accounts, actingThrough: proxy).pendingVerifications(viewer: proxy)
            for index in views.indices { views[index].isAdministrator = accounts.isAdministrator(views[index].id) }
            return views
        } catch {
            fatalError("internal inconsistency in BuiltInAdministrator: the proxy was refused: \(error)")
        }
    }

    /// A page of feedback, newest first (nil: there are no accounts, hence no feedback).
    package static func feedbackPage(_ accounts: AccountStore, before: UInt64?, limit: Int) -> FeedbackPage? {
        guard let proxy = accounts.state.accounts.keys.min() else { return nil }
        do {
            return try store(accounts, actingThrough: proxy).feedbackPage(viewer: proxy, before: before, limit: limit)
        } catch {
            fatalError("internal inconsistency in BuiltInAdministrator: the proxy was refused: \(error)")
        }
    }

    /// A user in full (phone, verification), as an administrator sees them.
    package static func user(_ accounts: AccountStore, _ user: UserID) throws(DomainError) -> UserView {
        try accounts.user(user, viewer: user)
    }

    package static func user(_ accounts: AccountStore, phone: String) throws(DomainError) -> UserView {
        guard let found = accounts.state.userByPhone[try PhoneNumber(parsing: phone)] else {
            throw DomainError(.notFound, "No user has this phone number.", field: "phone")
        }
        return try user(accounts, found)
    }

    /// Approves (reason nil) or rejects a pending verification, decided by user 0.
    static func decideVerification(_ accounts: AccountStore, user: UserID, reason: String?,
                                   now: Timestamp) throws(DomainError) -> AccountEvent {
        let scratch = store(accounts, actingThrough: user)
        let event = if let reason {
            try scratch.decideVerificationRejection(administrator: user, user: user, reason: reason, now: now)
        } else {
            try scratch.decideVerificationApproval(administrator: user, user: user, now: now)
        }
        guard case .verificationDecided(var decision) = event else {
            fatalError("internal inconsistency in BuiltInAdministrator: a verification decision of another kind")
        }
        decision.administrator = id
        return .verificationDecided(decision)
    }

    /// Grants (`isGranted`) or revokes administration, by user 0, with the domain's rules.
    static func decideAdministrator(_ accounts: AccountStore, user: UserID, isGranted: Bool,
                                    now: Timestamp) throws(DomainError) -> AccountEvent {
        guard let account = accounts.state.accounts[user] else { throw DomainError(.notFound, "No such user.", field: "user") }
        if isGranted {
            guard !accounts.isAdministrator(user) else {
                throw DomainError(.administratorUnchanged, "This user is already an administrator.")
            }
        } else {
            if accounts.policy.administratorPhones.contains(account.phone) {
                throw DomainError(.forbidden, "This administrator is set by the server configuration.")
            }
            guard accounts.state.grantedAdministrators.contains(user) else {
                throw DomainError(.administratorUnchanged, "This user is not an administrator.")
            }
        }
        return makeAdministratorChange(user: user, isGranted: isGranted, at: now)
    }

    /// `.administratorChanged` with user 0 as the granter, built through the event's Codable form.
    static func makeAdministratorChange(user: UserID, isGranted: Bool, at: Timestamp) -> AccountEvent {
        let json = #"{"administratorChanged":{"_0":{"user":\#(user.rawValue),"grantedBy":\#(id.rawValue),"#
            + #""isAdministrator":\#(isGranted),"at":\#(at.rawValue)}}}"#
        do {
            return try JSONDecoder().decode(AccountEvent.self, from: Data(json.utf8))
        } catch {
            fatalError("internal inconsistency in BuiltInAdministrator: AccountEvent's encoding changed: \(error)")
        }
    }
}
