// Administration on a node whose accounts several pairs hold. An administrator's account is in one
// partition and what they act on may be in another, so the node first asks the administrator's own
// partition whether they administer, now (`node.is_administrator`), and then sends the command,
// with the actor vouched for, where it is decided: a verification, a grant or a user to the
// subject's account partition, an order to its pair. The lists and counts are every partition's,
// merged here: verifications waiting, oldest first; feedback, newest first and paged across the
// partitions (PairFeedback.swift); the counts summed, what every owner hears from every node as the
// owner that counts the most sees it.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import JSON
import PartitionOwner

package struct PairAdministration: Sendable {
    let router: NodeRouter
    let map: PartitionMap

    /// The reply to `request` from `actor` (or the connection's fate, when a command's outcome is
    /// unknown): once, from any thread. The built-in administrator (the node took its admin
    /// secret) is not asked about.
    func run(_ request: Request, actor: RoutedActor, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        if actor.isBuiltInAdministrator { return send(request, by: actor, completion: completion) }
        let question = RoutedRequest(id: request.id, operation: AdministratorQuery.operation, data: nil, actor: actor)
        router.route(question, to: map.partition(ofUser: actor.user.rawValue)) { outcome in
            guard case .reply(let bytes) = outcome else { return completion(outcome) }
            guard let answer = Reply.data(of: bytes) else { return completion(outcome) }
            guard answer["administrator"] == .bool(true) else {
                return completion(.reply(Reply.failure(id: request.id, error: DomainError(.forbidden, "Only administrators may do this."))))
            }
            var vouched = actor
            vouched.isVouchedAdministrator = true
            send(request, by: vouched, completion: completion)
        }
    }

    /// Every account partition: where the lists and counts are gathered from.
    private var accountPartitions: [PartitionID] { map.allPartitions.filter { $0.space == .accounts } }

    /// The command, from an administrator vouched for, where it is decided.
    private func send(_ request: Request, by administrator: RoutedActor, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        let command = RoutedRequest(id: request.id, operation: request.operation, data: request.data, actor: administrator)
        if command.operation == AdminOperations.user.name { return lookUp(command, completion: completion) }
        if RoutedOperations.administeredPartition(of: command, in: map) != nil {
            return router.route(command, in: map, completion: completion)
        }
        if command.operation == AdminOperations.listFeedback.name { return listFeedback(command, completion: completion) }
        gather(command, completion: completion) { parts in Self.merge(command.operation, parts) }
    }

    /// `admin.user`: where its subject is; by phone, the phone's partition, and on to the user's
    /// when a user of another pair moved to that phone (its claim names them). A claim no account
    /// uses any more (the user's phone is another) is no user of that phone.
    private func lookUp(_ command: RoutedRequest, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        router.route(command, in: map) { [self] outcome in
            guard case .reply(let bytes) = outcome, case .integer(let user)? = Reply.data(of: bytes)?["claimed_by"], user > 0,
                  case .object(let fields)? = command.data, case .string(let text)? = fields["phone"],
                  let phone = try? PhoneNumber(parsing: text) else { return completion(outcome) }
            let byID = RoutedRequest(id: command.id, operation: command.operation, data: ["user_id": .integer(user)], actor: command.actor)
            router.route(byID, in: map) { outcome in
                guard case .reply(let bytes) = outcome, let answer = Reply.data(of: bytes) else { return completion(outcome) }
                guard answer["user"]?["phone"] == .string(phone.rawValue) else {
                    return completion(.reply(Reply.failure(id: command.id, error: DomainError(.notFound, "No user has this phone number.",
                                                                                              field: "phone"))))
                }
                completion(outcome)
            }
        }
    }

    /// Sends `command` to every account partition and answers with `merge` of their replies'
    /// data; the first refusal or failure is the answer.
    package func gather(_ command: RoutedRequest, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void,
                merge: @escaping @Sendable ([[String: JSONValue]]) -> JSONValue) {
        let id = command.id
        let partitions = accountPartitions
        let gathered = PartitionGather<[String: JSONValue], NodeRouter.Outcome>(expected: partitions.count)
        for partition in partitions {
            router.route(command, to: partition) { outcome in
                let read = if case .reply(let bytes) = outcome, let data = Reply.data(of: bytes) {
                    gathered.add(data)
                } else {
                    gathered.refuse(outcome)
                }
                switch read {
                case .waiting: break
                case .refused(let outcome): completion(outcome)
                case .complete(let parts):
                    completion(.reply(Reply.success(id: id, data: merge(parts))))
                }
            }
        }
    }

    /// One reply's data from every partition's.
    package static func merge(_ operation: String, _ parts: [[String: JSONValue]]) -> JSONValue {
        switch operation {
        case AdminOperations.pendingVerifications.name:
            let users = items("users", of: parts).sorted {
                (integer($0["verification"]?["submitted_at"]), integer($0["id"])) < (integer($1["verification"]?["submitted_at"]), integer($1["id"]))
            }
            return ["users": .array(users)]
        default:
            return sumCounts(parts)
        }
    }

    static func items(_ key: String, of parts: [[String: JSONValue]]) -> [JSONValue] {
        parts.flatMap { part -> [JSONValue] in if case .array(let items)? = part[key] { items } else { [] } }
    }

    static func integer(_ value: JSONValue?) -> Int64 { if case .integer(let number)? = value { number } else { 0 } }

    /// `admin.stats`: every number summed, but what every owner counts alike for the whole
    /// cluster from every node's report (runners online, connections, users online): the highest.
    private static func sumCounts(_ parts: [[String: JSONValue]]) -> JSONValue {
        func add(_ values: [JSONValue], key: String?) -> JSONValue {
            var objects: [[String: JSONValue]] = []
            var numbers: [Int64] = []
            for value in values {
                switch value {
                case .object(let members): objects.append(members)
                case .integer(let number): numbers.append(number)
                default: break
                }
            }
            if !objects.isEmpty {
                let keys = Set(objects.flatMap(\.keys))
                return .object(Dictionary(uniqueKeysWithValues: keys.map { key in (key, add(objects.compactMap { $0[key] }, key: key)) }))
            }
            return .integer(reportedByEveryNode.contains(key ?? "") ? numbers.max() ?? 0 : numbers.reduce(0, +))
        }
        return add(parts.map { JSONValue.object($0) }, key: nil)
    }

    private static let reportedByEveryNode: Set<String> = ["runners_online", "connections", "users_online"]
}
