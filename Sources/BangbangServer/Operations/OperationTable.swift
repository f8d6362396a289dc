// The operations of the `/ws` protocol (protocol/operations.md), one table built from the
// per-area lists. An operation reads its arguments, does its work (usually by hopping to the
// owner of the state it touches) and calls `context.reply` exactly once.
import BangbangCore
import BangbangProtocol

struct Operation: Sendable {
    let name: String
    /// Every operation needs a logged-in connection except logging in and public information.
    let requiresLogin: Bool
    let handler: @Sendable (OperationContext, Arguments) throws(DomainError) -> Void
    /// The request counter's label for a success (`order.publish:ok`), made once rather than
    /// for every reply.
    let successLabel: String

    init(_ name: String, requiresLogin: Bool = true,
         _ handler: @escaping @Sendable (OperationContext, Arguments) throws(DomainError) -> Void) {
        self.name = name
        self.requiresLogin = requiresLogin
        self.handler = handler
        successLabel = "\(name):ok"
    }
}

struct OperationTable: Sendable {
    static let shared = OperationTable(
        AuthOperations.all + ProfileOperations.all + AdminOperations.all + InfoOperations.all
            + OrderOperations.all + BoardOperations.all + MyOrdersOperations.all)

    let operations: [String: Operation]

    init(_ list: [Operation]) {
        var table: [String: Operation] = [:]
        for operation in list {
            precondition(table[operation.name] == nil, "operation \(operation.name) registered twice")
            table[operation.name] = operation
        }
        operations = table
    }
}

/// One request in progress. Created and used on the session's loop; `reply` may be called
/// from any queue and reaches the loop through its outbox, behind what was posted before.
struct OperationContext: Sendable {
    let session: ClientSession
    /// The request's `id`, for the reply. Only the id: the request's data is read before the
    /// operation hops to an owner, and is not kept while its change waits to be durable.
    let requestID: JSONValue
    let operation: String
    let successLabel: String
    let started: ContinuousClock.Instant

    var app: Application { session.app }

    /// The logged-in user. Only for operations that require login (checked before they run).
    var user: UserID {
        guard let user = session.user else { fatalError("internal inconsistency in OperationContext: no user for \(operation)") }
        return user
    }

    /// A success reply's `data`: a value, JSON already written (an order, by `OrderWire`), or
    /// `{"order": <view>}` around a view already written (written straight into the reply).
    enum ReplyData: Sendable {
        case value(JSONValue)
        case encoded([UInt8])
        case orderView([UInt8])
    }

    func reply(_ result: Result<JSONValue, DomainError>) {
        deliver(result.map { .value($0) })
    }

    private func deliver(_ result: Result<ReplyData, DomainError>) {
        session.registry.post(.reply(self, result))
    }

    func succeed(_ data: JSONValue = [:]) { reply(.success(data)) }
    /// Succeeds with `data` already encoded as JSON.
    func succeed(encoded data: [UInt8]) { deliver(.success(.encoded(data))) }
    /// Succeeds with `{"order": <view>}`, the view already encoded (`OrderWire.encoded`).
    func succeed(orderView view: [UInt8]) { deliver(.success(.orderView(view))) }
    func fail(_ error: DomainError) { reply(.failure(error)) }
}
