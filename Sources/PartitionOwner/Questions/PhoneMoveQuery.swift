// What a node asks the account partitions to move a user's phone to another pair, and to log in
// by a phone that moved (AccountStore+PhoneMoves.swift has the rules; the node's
// side is PhoneMoves.swift). Not client operations: only nodes reach `bb.req.a<n>`.
//   {"op": "node.claim_phone", "data": {"phone": …, "code": …}, "actor": …}       the phone's partition
//   {"op": "node.take_phone", "data": {"phone": …, "claimed_at": …}, "actor": …}  the user's; or with
//        "code" for a phone of the user's own partition; answers {"user", "old_phone", "at"}
//   {"op": "node.release_phone", "data": {"phone", "user", "stamped_by", "unused"}}  the phone's partition
//   {"op": "node.login_claimed", "data": {"user", "phone", "device"?, "password"?}}  the user's: a login
//        reply, or {"unused_claim": true} when the account's phone is another
// A login by code or password in the phone's partition whose phone is claimed answers
// {"claimed_by": user, "claimed_at": time} (AuthOperations), which the node takes on from.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import Crypto

package enum PhoneMoveQuery {
    package static let claim = "node.claim_phone"
    package static let take = "node.take_phone"
    package static let release = "node.release_phone"
    package static let login = "node.login_claimed"

    static let names: Set<String> = [claim, take, release, login]

    /// The account partition a question goes to: the phone's for a claim or a release, the user's
    /// (the actor's, or `user`) for a take or a login.
    package static func partition(of request: RoutedRequest, in map: PartitionMap) -> PartitionID? {
        guard case .object(let data)? = request.data else { return nil }
        switch request.operation {
        case claim, release:
            guard case .string(let text)? = data["phone"], let phone = try? PhoneNumber(parsing: text) else { return nil }
            return map.partition(ofPhone: phone.rawValue)
        case login:
            guard case .integer(let user)? = data["user"], user > 0 else { return nil }
            return map.partition(ofUser: UInt64(user))
        default:
            return request.actor.map { map.partition(ofUser: $0.user.rawValue) }
        }
    }

    static func answerClaim(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let context = RoutedOperations.context(of: request, as: ProfileOperations.changePhone.name, app: app, answer: answer)
        let phone: String, code: String, user: UserID
        do throws(DomainError) {
            user = try requireActor(request)
            let arguments = try Arguments(request.data)
            try arguments.allowOnly(["phone", "code"])
            phone = try arguments.string("phone", maxLength: 32)
            code = try arguments.string("code", maxLength: 16)
        } catch {
            return context.fail(error)
        }
        app.accounts.perform { owner in
            let now = app.clock()
            if let number = try? PhoneNumber(parsing: phone), let claim = owner.store.freshClaim(on: number, by: user, now: now) {
                return context.succeed(["claimed_at": .integer(claim.at.rawValue)])
            }
            let decision = owner.store.decidePhoneClaim(user: user, newPhone: phone, code: code, now: now)
            for event in decision.throttle { owner.store.apply(event) }
            switch decision.outcome {
            case .failure(let error): context.fail(error)
            case .success(let event): AuthOperations.commit(event, on: owner, at: now, context: context) { _ in ["claimed_at": .integer(now.rawValue)] }
            }
        }
    }

    static func answerTake(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let context = RoutedOperations.context(of: request, as: ProfileOperations.changePhone.name, app: app, answer: answer)
        let phone: PhoneNumber, user: UserID, proof: Proof
        do throws(DomainError) {
            user = try requireActor(request)
            let arguments = try Arguments(request.data)
            try arguments.allowOnly(["phone", "code", "claimed_at"])
            phone = try PhoneNumber(parsing: try arguments.string("phone", maxLength: 32))
            if let claimedAt = try arguments.optionalInteger("claimed_at", in: 0...Int64.max) {
                proof = .claimed(at: Timestamp(rawValue: claimedAt))
            } else {
                proof = .code(try arguments.string("code", maxLength: 16))
            }
        } catch {
            return context.fail(error)
        }
        app.accounts.perform { owner in
            let now = app.clock()
            let decision: AccountDecision
            switch proof {
            case .claimed(let claimedAt):
                decision = owner.store.decideClaimedPhoneChange(user: user, newPhone: phone, claimedAt: claimedAt, now: now)
            case .code(let code):
                decision = owner.store.decidePhoneChange(user: user, newPhone: phone.rawValue, code: code, now: now)
            }
            for event in decision.throttle { owner.store.apply(event) }
            switch decision.outcome {
            case .failure(let error): context.fail(error)
            case .success(let event):
                guard case .phoneChanged(let change) = event else { fatalError("internal inconsistency in answerTake: not a phone change") }
                AuthOperations.commit(event, on: owner, at: now, context: context) { store in
                    guard case .object(var data) = ProfileOperations.myView(user)(store) else { return [:] }
                    data["old_phone"] = .string(change.oldPhone.rawValue)
                    data["at"] = .integer(now.rawValue)
                    return .object(data)
                }
            }
        }
    }

    static func answerRelease(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let context = RoutedOperations.context(of: request, as: release, app: app, answer: answer)
        let phone: PhoneNumber, user: UserID, stampedBy: Timestamp, isUnused: Bool
        do throws(DomainError) {
            let arguments = try Arguments(request.data)
            try arguments.allowOnly(["phone", "user", "stamped_by", "unused"])
            phone = try PhoneNumber(parsing: try arguments.string("phone", maxLength: 32))
            user = UserID(rawValue: UInt64(try arguments.integer("user", in: 1...Int64.max)))
            stampedBy = Timestamp(rawValue: try arguments.integer("stamped_by", in: 0...Int64.max))
            isUnused = try arguments.optionalBool("unused") ?? false
        } catch {
            return context.fail(error)
        }
        app.accounts.perform { owner in
            let now = app.clock()
            guard let event = owner.store.decidePhoneRelease(user: user, phone: phone, stampedBy: stampedBy, isUnused: isUnused, now: now) else {
                return context.succeed(["released": false])
            }
            AuthOperations.commit(event, on: owner, at: now, context: context) { _ in ["released": true] }
        }
    }

    static func answerLogin(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let hasPassword = if case .object(let data)? = request.data { data["password"] != nil } else { false }
        let operation = hasPassword ? AuthOperations.loginWithPassword.name : AuthOperations.loginWithCode.name
        let context = RoutedOperations.context(of: request, as: operation, app: app, answer: answer)
        let phone: PhoneNumber, user: UserID, device: String?
        do throws(DomainError) {
            let arguments = try Arguments(request.data)
            try arguments.allowOnly(["phone", "user", "device", "password"])
            phone = try PhoneNumber(parsing: try arguments.string("phone", maxLength: 32))
            user = UserID(rawValue: UInt64(try arguments.integer("user", in: 1...Int64.max)))
            device = try arguments.optionalString("device", maxLength: 64)
        } catch {
            return context.fail(error)
        }
        app.accounts.perform { owner in
            guard owner.store.phone(of: user) == phone else { return context.succeed(["unused_claim": true]) }
            if hasPassword {
                // The account's phone is this one here too: the login by password runs as it runs
                // for a phone of this partition, its failures counted against the phone here.
                var data: [String: JSONValue] = if case .object(let members)? = request.data { members } else { [:] }
                data["user"] = nil
                do throws(DomainError) {
                    try AuthOperations.loginWithPassword.handler(context, try Arguments(.object(data)))
                } catch {
                    context.fail(error)
                }
                return
            }
            var random = SecureRandomNumberGenerator()
            let now = app.clock()
            guard let decision = owner.store.decideClaimedCodeLogin(user: user, phone: phone, device: device, now: now, using: &random) else {
                return context.succeed(["unused_claim": true])
            }
            AuthOperations.completeLogin(context, owner: owner, decision: decision, now: now)
        }
    }

    /// What shows the new phone is the user's: its partition's claim, or the code sent to it.
    private enum Proof {
        case claimed(at: Timestamp)
        case code(String)
    }

    private static func requireActor(_ request: RoutedRequest) throws(DomainError) -> UserID {
        guard let actor = request.actor?.user else {
            throw DomainError(.unauthenticated, "\"\(request.operation)\" is about a user: the request names the \"actor\"")
        }
        return actor
    }
}
