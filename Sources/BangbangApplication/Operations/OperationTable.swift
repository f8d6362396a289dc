// The operations of the `/ws` protocol (protocol/operations.md), one table built from the
// per-area lists. An operation reads its arguments, does its work (usually by hopping to the
// owner of the state it touches) and calls `context.reply` exactly once.
import BangbangCore
import BangbangProtocol

package struct Operation: Sendable {
    package let name: String
    /// Every operation needs a logged-in connection except logging in and public information.
    package let requiresLogin: Bool
    /// Administration (`admin.*`, AdminOperations.swift): what the built-in administrator may run,
    /// and what an administrator's request runs as.
    package let isAdministration: Bool
    package let handler: @Sendable (OperationContext, Arguments) throws(DomainError) -> Void
    /// The request counter's label for a success (`order.publish:ok`), made once rather than
    /// for every reply.
    package let successLabel: String

    init(_ name: String, requiresLogin: Bool = true,
         _ handler: @escaping @Sendable (OperationContext, Arguments) throws(DomainError) -> Void) {
        self.name = name
        self.requiresLogin = requiresLogin
        isAdministration = name.hasPrefix("admin.")
        self.handler = handler
        successLabel = "\(name):ok"
    }
}

package struct OperationTable: Sendable {
    package static let shared = OperationTable(
        AuthOperations.all + ProfileOperations.all + AdminOperations.all + InfoOperations.all
            + OrderOperations.all + BoardOperations.all + MyOrdersOperations.all)

    package let operations: [String: Operation]

    init(_ list: [Operation]) {
        var table: [String: Operation] = [:]
        for operation in list {
            precondition(table[operation.name] == nil, "operation \(operation.name) registered twice")
            table[operation.name] = operation
        }
        operations = table
    }
}

/// One request in progress: on one of this node's connections (created and used on the
/// session's loop; `reply` may be called from any queue and reaches the loop through its outbox,
/// behind what was posted before), or routed here from another node's connection to the owner
/// of the partition it concerns (RoutedOperations.swift), whose reply goes back over NATS.
package struct OperationContext: Sendable {
    package enum Caller: Sendable {
        case session(ClientSession)
        case routed(RoutedCall)
    }

    let caller: Caller
    /// The request's `id`, for the reply. Only the id: the request's data is read before the
    /// operation hops to an owner, and is not kept while its change waits to be durable.
    let requestID: JSONValue
    package let operation: String
    package let successLabel: String
    let started: ContinuousClock.Instant

    package init(session: ClientSession, requestID: JSONValue, operation: String, successLabel: String,
         started: ContinuousClock.Instant) {
        self.init(caller: .session(session), requestID: requestID, operation: operation, successLabel: successLabel,
                  started: started)
    }

    package init(caller: Caller, requestID: JSONValue, operation: String, successLabel: String, started: ContinuousClock.Instant) {
        self.caller = caller
        self.requestID = requestID
        self.operation = operation
        self.successLabel = successLabel
        self.started = started
    }

    /// The connection the request came on. Only for operations that are never routed (logging
    /// in, watching the boards, administration): a routed request has no connection here.
    package var session: ClientSession {
        guard case .session(let session) = caller else {
            fatalError("internal inconsistency in OperationContext: \(operation) needs a connection, and it was routed")
        }
        return session
    }

    var app: Application {
        switch caller {
        case .session(let session): session.app
        case .routed(let call): call.app
        }
    }

    /// The logged-in user. Only for operations that require login (checked before they run).
    package var user: UserID {
        switch caller {
        case .session(let session):
            guard let user = session.user else { fatalError("internal inconsistency in OperationContext: no user for \(operation)") }
            return user
        case .routed(let call):
            guard let actor = call.actor else { fatalError("internal inconsistency in OperationContext: no actor for \(operation)") }
            return actor.user
        }
    }

    /// The logged-in user if there is one, for operations that run with or without a login.
    var requester: UserID? {
        switch caller {
        case .session(let session): session.user
        case .routed(let call): call.actor?.user
        }
    }

    /// The session the asking connection is logged in with: the connection's, or the one the
    /// node holding it sent with the actor.
    var sessionID: SessionID? {
        switch caller {
        case .session(let session): session.sessionID
        case .routed(let call): call.actor?.session
        }
    }

    /// The client's address, for limits that count by address: the connection's, or the one
    /// the node holding it sent.
    package var clientAddress: String {
        switch caller {
        case .session(let session): session.channel?.clientOrigin.address.description ?? "unknown"
        case .routed(let call): call.clientAddress ?? "unknown"
        }
    }

    /// Whether the user may run errands: read from the account half where the connection is,
    /// carried in the request when it was routed, since the owner of an order's partition does
    /// not hold the runner's account.
    package var isApprovedRunner: Bool {
        switch caller {
        case .session: app.isApprovedRunner(user)
        case .routed(let call): call.actor?.isApprovedRunner ?? false
        }
    }

    /// A success reply's `data`: a value, JSON already written (an order, by `OrderWire`), or
    /// `{"order": <view>}` around a view already written (written straight into the reply).
    package enum ReplyData: Sendable {
        case value(JSONValue)
        case encoded([UInt8])
        case orderView([UInt8])
    }

    package func reply(_ result: Result<JSONValue, DomainError>) {
        deliver(result.map { .value($0) })
    }

    private func deliver(_ result: Result<ReplyData, DomainError>) {
        switch caller {
        case .session(let session): session.registry.post(.reply(self, result))
        case .routed(let call): call.finish(self, with: result)
        }
    }

    package func succeed(_ data: JSONValue = [:]) { reply(.success(data)) }
    /// Succeeds with `data` already encoded as JSON.
    package func succeed(encoded data: [UInt8]) { deliver(.success(.encoded(data))) }
    /// Succeeds with `{"order": <view>}`, the view already encoded (`OrderWire.encoded`).
    package func succeed(orderView view: [UInt8]) { deliver(.success(.orderView(view))) }
    package func fail(_ error: DomainError) { reply(.failure(error)) }

    /// The reply message for `result`, and the result's label for the request counter.
    package static func message(for requestID: JSONValue, _ result: Result<ReplyData, DomainError>) -> (bytes: [UInt8], label: String) {
        switch result {
        case .success(.value(let data)): (Reply.success(id: requestID, data: data), "ok")
        case .success(.encoded(let data)): (Reply.success(id: requestID, encodedData: data), "ok")
        case .success(.orderView(let view)): (Reply.success(id: requestID, encodedOrderView: view), "ok")
        case .failure(let error): (Reply.failure(id: requestID, error: error), error.code.rawValue)
        }
    }
}
