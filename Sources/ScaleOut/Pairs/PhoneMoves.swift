// The node's side of a phone that moves across pairs (PhoneMoveQuery.swift is the partitions'
// side). With several pairs a user's account stays in the partition of the phone it registered
// with, and a later phone may hash to another:
//
// - `profile.change_phone`: the new phone's partition claims it for the user with the code sent
//   there (`node.claim_phone`; `phone_taken` if anyone else holds it), the user's own partition
//   changes the account (`node.take_phone`, or with the code itself when the phone is of its own
//   partition) and answers the phone it had, and that phone's partition, if another, gives up its
//   claim (`node.release_phone`). Every step is safe to repeat: a client that tries again within
//   a minute goes on with its claim, its code used already.
// - A login by a phone whose partition answers that a user of another holds it (the code proven
//   there): the user's partition opens the session, or checks the password, for the account whose
//   phone it is (`node.login_claimed`). A claim no account uses any more is released when a login
//   finds it, once it is old enough that no move can still take it, and the login is told to
//   start again (a new code), which then registers the phone or finds its user.
//
// Each outcome is the client's reply for its request id, as routing gives one; a step never
// answered closes the connection with 1012 as any routed request does (NodeRouter).
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import JSON
import PartitionOwner

package struct PhoneMoves: Sendable {
    let router: NodeRouter
    let map: PartitionMap
    package let logger: Logger

    /// `profile.change_phone` of `request.actor`, across partitions or not.
    package func changePhone(_ request: RoutedRequest, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        guard let actor = request.actor, case .object(let data)? = request.data, case .string(let text)? = data["phone"],
              let phone = try? PhoneNumber(parsing: text) else {
            // Malformed: the owner's own refusal is the reply.
            return router.route(request, in: map, completion: completion)
        }
        let home = map.partition(ofUser: actor.user.rawValue)
        let target = map.partition(ofPhone: phone.rawValue)
        if target == home {
            return take(request, data: data, claimedAt: nil, completion: completion)
        }
        let claim = RoutedRequest(id: request.id, operation: PhoneMoveQuery.claim, data: request.data, actor: actor)
        router.route(claim, to: target) { outcome in
            guard case .reply(let reply) = outcome, case .integer(let claimedAt)? = Reply.data(of: reply)?["claimed_at"] else {
                return completion(outcome)
            }
            take(request, data: data, claimedAt: claimedAt, completion: completion)
        }
    }

    /// The change in the user's own partition, then the old phone's claim released.
    private func take(_ request: RoutedRequest, data: [String: JSONValue], claimedAt: Int64?,
                      completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        guard let actor = request.actor, case .string(let phone)? = data["phone"] else {
            return router.route(request, in: map, completion: completion)
        }
        var fields: [String: JSONValue] = ["phone": .string(phone)]
        if let claimedAt { fields["claimed_at"] = .integer(claimedAt) } else { fields["code"] = data["code"] }
        let take = RoutedRequest(id: request.id, operation: PhoneMoveQuery.take, data: .object(fields), actor: actor)
        router.route(take, to: map.partition(ofUser: actor.user.rawValue)) { [self] outcome in
            guard case .reply(let reply) = outcome else { return completion(outcome) }
            guard let answer = Reply.data(of: reply), let user = answer["user"], case .string(let old)? = answer["old_phone"],
                  case .integer(let at)? = answer["at"] else {
                // Refused (the claim too old, or the phone theirs already: a move tried again
                // after it was done). A claim it leaves keeps others off the phone until a login
                // finds it unused; releasing it here could undo a move already made.
                return completion(outcome)
            }
            let clientReply = Reply.success(id: request.id, data: ["user": user])
            guard let oldPhone = try? PhoneNumber(parsing: old),
                  map.partition(ofPhone: oldPhone.rawValue) != map.partition(ofUser: actor.user.rawValue) else {
                return completion(.reply(clientReply))
            }
            release(oldPhone.rawValue, of: actor.user, stampedBy: at, isUnused: false) { _ in completion(.reply(clientReply)) }
        }
    }

    /// Gives up `user`'s claim on `phone` stamped at or before `stampedBy`; a claim that stays
    /// (no owner, no answer) is logged: it keeps others off the phone until a login finds it unused.
    private func release(_ phone: String, of user: UserID, stampedBy: Int64, isUnused: Bool,
                         completion: @escaping @Sendable (Bool) -> Void) {
        guard let number = try? PhoneNumber(parsing: phone) else { return completion(false) }
        let request = RoutedRequest(id: .integer(0), operation: PhoneMoveQuery.release, data: [
            "phone": .string(phone), "user": .integer(Int64(user.rawValue)), "stamped_by": .integer(stampedBy),
            "unused": .bool(isUnused),
        ], actor: nil)
        router.route(request, to: map.partition(ofPhone: number.rawValue)) { [logger] outcome in
            guard case .reply(let reply) = outcome, let answer = Reply.data(of: reply) else {
                logger.warning("phone_claim_kept", ["user": user.rawValue, "detail": "the release of an old phone's claim went unanswered: \(outcome)"])
                return completion(false)
            }
            completion(answer["released"] == .bool(true))
        }
    }

    /// `auth.login_code` or `auth.login_password`: to the phone's partition, and on to the user's
    /// when the phone is claimed there.
    func logIn(_ request: RoutedRequest, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        router.route(request, in: map) { [self] outcome in
            guard case .reply(let reply) = outcome, let answer = Reply.data(of: reply),
                  case .integer(let user)? = answer["claimed_by"], user > 0, case .integer(let claimedAt)? = answer["claimed_at"],
                  case .object(var fields)? = request.data, case .string(let phone)? = fields["phone"] else {
                return completion(outcome)
            }
            fields["code"] = nil
            fields["user"] = .integer(user)
            let login = RoutedRequest(id: request.id, operation: PhoneMoveQuery.login, data: .object(fields), actor: nil,
                                      clientAddress: request.clientAddress)
            router.route(login, to: map.partition(ofUser: UInt64(user))) { [self] outcome in
                guard case .reply(let reply) = outcome, Reply.data(of: reply)?["unused_claim"] == .bool(true) else {
                    return completion(outcome)
                }
                let isPassword = request.operation == AuthOperations.loginWithPassword.name
                release(phone, of: UserID(rawValue: UInt64(user)), stampedBy: claimedAt, isUnused: true) { released in
                    logger.info("phone_claim_unused", ["user": user, "released": released])
                    completion(.reply(Reply.failure(id: request.id, error: isPassword
                        ? DomainError(.invalidCredentials, "Wrong phone number or password.")
                        : DomainError(.codeExpired, "This number's account is being moved; request a new code and log in again.",
                                      field: "code"))))
                }
            }
        }
    }
}
