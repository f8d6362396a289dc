// Operations routed to a partition's owner. A node that holds a client's connection sends a request
// about an order to the owner of the order's board partition, with the facts about the actor that
// the owner decides on; the owner runs the same operation it runs for a connection of its own and
// answers with the reply message itself, made for the client's request id, so the node passes it on
// byte for byte. Two kinds are routed, each to the partition that decides it: an order's operations
// to its board partition's owner, and the account operations that need nothing of the connection
// but its user (the profile, the runner's verification, feedback, passwords) to the owner of that
// user's account partition, and a code, a login and a resume to the owner of the phone's or the
// token's user's partition, which answers what the node holding the connection needs to follow the
// user's stream from there (the reply's `seq`); the list of sessions and logging out, with the
// connection's session sent with the actor. Administration runs on the account owner with the
// connection's user as the administrator. The reads of every board at once (a listing, the counts,
// a user's orders and takings) are answered whole by the owner of a deployment's one board
// partition. Watching the boards needs the connection, and runs where it is. With several pairs, a
// phone changed to, or logged in by, a number of another pair takes questions of its own
// (PhoneMoveQuery.swift). What a routed request carries is RoutedRequest.swift.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster

package enum RoutedOperations {
    /// The operations a board partition's owner runs for another node's connection.
    static let orderOperations: Set<String> = Set(OrderOperations.all.map(\.name))
    /// The operations an account partition's owner runs for another node's connection: those
    /// of a user's own account and sessions, and the logins (`loginOperations`).
    static let accountOperations: Set<String> = Set(
        ProfileOperations.all.map(\.name) + [AuthOperations.setPassword.name, AuthOperations.changePassword.name,
                                             AuthOperations.sessions.name, AuthOperations.logout.name,
                                             AuthOperations.revokeSession.name] + loginOperations
            + AdminOperations.all.map(\.name))
    /// What needs no login and goes to the account partition of a phone (a code, a login by code or
    /// password: the phone's partition keeps its codes, throttles and claim) or of the user a token
    /// names (a resume): the reply carries what the node holding the connection needs, the user and
    /// the stream's number.
    package static let loginOperations = [AuthOperations.requestCode.name, AuthOperations.loginWithCode.name,
                                  AuthOperations.loginWithPassword.name, AuthOperations.resume.name]

    /// Reads of every board at once that the owner of a deployment's one board partition answers
    /// whole for another node's connection. With several board partitions each holds a part, which
    /// the node holding the connection merges; the owner then refuses them, rather than answer a
    /// part as the whole, except a `board.list` of one campus, which its campus's partition holds
    /// whole.
    static let wholeBoardReads: Set<String> = [BoardOperations.list.name, BoardOperations.stats.name,
                                               MyOrdersOperations.mine.name, MyOrdersOperations.earnings.name]

    static let boardOperations = orderOperations.union(wholeBoardReads)

    /// Questions only nodes ask, not in the client operation table: a user's stream events after
    /// a number (account partitions), a partition's part of a board listing, its open orders per
    /// board, a user's orders on its shards and a runner's takings there (board partitions).
    static func nodeQuestion(_ operation: String) -> (space: PartitionSpace,
        answer: @Sendable (RoutedRequest, Application, @escaping @Sendable ([UInt8]) -> Void) -> Void)? {
        switch operation {
        case PersonalStreamQuery.operation: (.accounts, { request, app, answer in answer(PersonalStreamQuery.answer(request, app: app)) })
        case AdministratorQuery.operation: (.accounts, AdministratorQuery.answer)
        case FeedbackQuery.page: (.accounts, FeedbackQuery.answerPage)
        case FeedbackQuery.at: (.accounts, FeedbackQuery.answerAt)
        case PhoneMoveQuery.claim: (.accounts, PhoneMoveQuery.answerClaim)
        case PhoneMoveQuery.take: (.accounts, PhoneMoveQuery.answerTake)
        case PhoneMoveQuery.release: (.accounts, PhoneMoveQuery.answerRelease)
        case PhoneMoveQuery.login: (.accounts, PhoneMoveQuery.answerLogin)
        case BoardListQuery.operation: (.boards, BoardListQuery.answer)
        case BoardCountsQuery.operation: (.boards, BoardCountsQuery.answer)
        case LiveOrdersQuery.operation: (.boards, LiveOrdersQuery.answer)
        case LiveEarningsQuery.operation: (.boards, LiveEarningsQuery.answer)
        default: nil
        }
    }

    /// The user a node's question is about: its actor; nil once `answer` has been told
    /// `unauthenticated` (a question about nobody).
    static func askingActor(_ request: RoutedRequest, app: Application, answer: @Sendable ([UInt8]) -> Void) -> UserID? {
        if let actor = request.actor?.user { return actor }
        app.metrics.requests.increment(label: "routed:unauthenticated")
        answer(Reply.failure(id: request.id, error: DomainError(.unauthenticated,
            "\"\(request.operation)\" is about a user: the request names the \"actor\"")))
        return nil
    }

    static func names(in space: PartitionSpace) -> Set<String> {
        switch space {
        case .boards: boardOperations
        case .accounts: accountOperations
        }
    }

    /// The space of the partitions that decide `operation`: accounts for an account operation and
    /// a node's question about a user's stream, boards for the rest.
    package static func space(of operation: String) -> PartitionSpace {
        if let question = nodeQuestion(operation) { return question.space }
        return accountOperations.contains(operation) ? .accounts : .boards
    }

    /// The account partition that decides an account operation: the phone's for a code
    /// requested, else the one of the user it reads or changes, which is the actor, except for
    /// `profile.get` of another user (`user_id`). Nil when the request names neither.
    static func accountPartition(of request: RoutedRequest, in map: PartitionMap) -> PartitionID? {
        if request.operation == FeedbackQuery.page { return nil }
        if PhoneMoveQuery.names.contains(request.operation) { return PhoneMoveQuery.partition(of: request, in: map) }
        if request.operation == FeedbackQuery.at {
            guard case .object(let data)? = request.data, case .integer(let id)? = data["id"], id > 0 else { return nil }
            return map.partition(ofUser: UInt64(id))
        }
        if request.operation == PersonalStreamQuery.operation {
            guard case .object(let data)? = request.data, case .integer(let user)? = data["user"], user > 0 else { return nil }
            return map.partition(ofUser: UInt64(user))
        }
        if request.operation == AuthOperations.resume.name {
            guard case .object(let data)? = request.data, case .string(let token)? = data["token"],
                  let user = SessionToken.claimedUser(of: token) else { return nil }
            return map.partition(ofUser: user.rawValue)
        }
        if loginOperations.contains(request.operation) {
            guard case .object(let data)? = request.data, case .string(let text)? = data["phone"],
                  let phone = try? PhoneNumber(parsing: text) else { return nil }
            return map.partition(ofPhone: phone.rawValue)
        }
        if request.operation == ProfileOperations.get.name, case .object(let data)? = request.data,
           case .integer(let subject)? = data["user_id"], subject > 0 {
            return map.partition(ofUser: UInt64(subject))
        }
        if map.partitionCount > 1, administrationNames.contains(request.operation) {
            return administeredPartition(of: request, in: map)
        }
        return request.actor.map { map.partition(ofUser: $0.user.rawValue) }
    }

    /// The context `request` runs in as `operation` on this owner, its one reply going to `answer`.
    static func context(of request: RoutedRequest, as operation: String, successLabel: String? = nil, app: Application,
                        answer: @escaping @Sendable ([UInt8]) -> Void) -> OperationContext {
        OperationContext(caller: .routed(RoutedCall(app: app, actor: request.actor, clientAddress: request.clientAddress, answer: answer)),
                         requestID: request.id,
                         operation: operation, successLabel: successLabel ?? "\(operation):ok", started: ContinuousClock.now)
    }

    package static let administrationNames = Set(OperationTable.shared.operations.values.filter(\.isAdministration).map(\.name))

    /// What a node asks the account partitions for an administrator (FeedbackQuery.swift), and
    /// may ask for the built-in administrator.
    static let administrationQuestions: Set<String> = [FeedbackQuery.page, FeedbackQuery.at]

    /// With several pairs, the account partition an administrator's command concerns: its
    /// subject's (`user_id` or `phone`), or the pair of the order it reads (`order_id`: the
    /// pair's application holds the order's board); nil for the lists and counts, which every
    /// partition answers its part of (PairAdministration.swift).
    package static func administeredPartition(of request: RoutedRequest, in map: PartitionMap) -> PartitionID? {
        guard case .object(let data)? = request.data else { return nil }
        if case .integer(let user)? = data["user_id"], user > 0 { return map.partition(ofUser: UInt64(user)) }
        if case .string(let text)? = data["phone"], let phone = try? PhoneNumber(parsing: text) { return map.partition(ofPhone: phone.rawValue) }
        if case .integer(let id)? = data["order_id"], id > 0 {
            let board = map.partition(ofOrderSerial: OrderID(rawValue: UInt64(id)).serial)
            return PartitionID(space: .accounts, index: board.index)
        }
        return nil
    }

    /// The partition that decides `request`, read from it with no lookup (an order's id and a
    /// user's id name their partitions): a publish's campus's board partition, which also holds the
    /// whole of a `board.list` of that campus, the board partition any other order operation's
    /// `order_id` names, the account partition of the account an account operation concerns, or
    /// whose stream a node asks about. Nil for an operation that is not routed, for a listing of
    /// every campus, and for a request without the campus, order id, phone, user or actor to read,
    /// which the operation itself refuses wherever it runs.
    package static func partition(of request: RoutedRequest, in map: PartitionMap) -> PartitionID? {
        if space(of: request.operation) == .accounts { return accountPartition(of: request, in: map) }
        let isCampusListing = request.operation == BoardOperations.list.name
        guard orderOperations.contains(request.operation) || isCampusListing, case .object(let data)? = request.data else { return nil }
        if request.operation == OrderOperations.publish.name || isCampusListing {
            guard case .string(let campus)? = data["campus"] else { return nil }
            return map.partition(ofCampus: campus)
        }
        guard case .integer(let id)? = data["order_id"], id > 0 else { return nil }
        return map.partition(ofOrderSerial: OrderID(rawValue: UInt64(id)).serial)
    }

    /// Runs the routed request `payload` on this node, which owns `partition` (of a deployment
    /// partitioned by `map`), and gives `answer` the reply message, exactly once (from any
    /// queue). Bad input, an operation `partition` does not decide, or an account or order of
    /// another partition gets a `bad_request` or `unknown_operation` reply, never a crash.
    static func run(_ payload: [UInt8], serving partition: PartitionID, of map: PartitionMap, app: Application,
                    answer: @escaping @Sendable ([UInt8]) -> Void) {
        let request: RoutedRequest
        switch RoutedRequest.decode(payload) {
        case .success(let decoded): request = decoded
        case .failure(let failure):
            app.metrics.requests.increment(label: "routed:bad_request")
            return answer(Reply.failure(id: failure.id, error: failure.error))
        }
        let question = nodeQuestion(request.operation)
        let operation = OperationTable.shared.operations[request.operation]
        guard space(of: request.operation) == partition.space,
              question != nil || (names(in: partition.space).contains(request.operation) && operation != nil) else {
            app.metrics.requests.increment(label: "routed:unknown_operation")
            return answer(Reply.failure(id: request.id, error: DomainError(.unknownOperation,
                "\"\(request.operation)\" is not an operation the owner of \(partition) runs for another node")))
        }
        let deciding = Self.partition(of: request, in: map) ?? partition
        guard deciding == partition else {
            app.metrics.requests.increment(label: "routed:bad_request")
            let what = partition.space == .accounts ? "the account this" : "the order this"
            return answer(Reply.failure(id: request.id, error: DomainError(.badRequest,
                "\(what) \"\(request.operation)\" concerns is in \(deciding), and this is the owner of \(partition)",
                field: partition.space == .accounts ? "actor" : "data")))
        }
        if let question { return question.answer(request, app, answer) }
        let holdsTheWhole = request.operation == BoardOperations.list.name && Self.partition(of: request, in: map) != nil
        if wholeBoardReads.contains(request.operation), map.partitionCount > 1, !holdsTheWhole {
            app.metrics.requests.increment(label: "routed:bad_request")
            return answer(Reply.failure(id: request.id, error: DomainError(.badRequest,
                "\"\(request.operation)\" reads every board, and \(partition) holds one part of \(map.partitionCount); ask each partition for its part")))
        }
        guard let operation else { return answer(Reply.failure(id: request.id, error: DomainError(.unknownOperation, "no such operation"))) }
        if operation.requiresLogin, request.actor == nil {
            app.metrics.requests.increment(label: "\(operation.name):unauthenticated")
            return answer(Reply.failure(id: request.id, error: DomainError(.unauthenticated,
                "\"\(request.operation)\" needs a logged-in user: a routed request for it names the \"actor\"")))
        }
        let context = Self.context(of: request, as: operation.name, successLabel: operation.successLabel, app: app, answer: answer)
        do {
            try operation.handler(context, try Arguments(request.data))
        } catch {
            context.reply(.failure(error))
        }
    }
}
