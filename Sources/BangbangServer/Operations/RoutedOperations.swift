// Operations routed to a partition's owner (docs/scale-out.md, sections 7 and 7b). A node that
// holds a client's connection sends a request about an order to the owner of the order's board
// partition, with the facts about the actor that the owner decides on; the owner runs the same
// operation it runs for a connection of its own and answers with the reply message itself, made
// for the client's request id, so the node passes it on byte for byte. Only the order operations
// are routed: logging in, watching the boards and administration need the connection, and run
// where it is.
//
// A routed request is the client's request with the actor added, members in key order:
//   {"actor": {"runner": true, "user": 42}, "data": {…}, "id": 7, "op": "order.accept"}
import BangbangCore
import BangbangProtocol

/// Who asks, as the node holding their connection knows them.
struct RoutedActor: Sendable, Equatable {
    let user: UserID
    let isApprovedRunner: Bool
}

struct RoutedRequest: Sendable {
    var id: JSONValue
    var operation: String
    var data: JSONValue?
    var actor: RoutedActor

    func encoded() -> [UInt8] {
        var object: [String: JSONValue] = [
            "actor": ["runner": .bool(actor.isApprovedRunner), "user": .integer(Int64(actor.user.rawValue))],
            "id": id, "op": .string(operation),
        ]
        if let data { object["data"] = data }
        return JSONWriter.encode(.object(object))
    }

    /// Reads a routed request; a failure carries the request's id when one could be read.
    static func decode(_ bytes: [UInt8]) -> Result<RoutedRequest, RequestDecodeFailure> {
        let base: Request
        let extra: [String: JSONValue]
        switch bytes.withUnsafeBytes({ Request.decode($0, allowing: ["actor"]) }) {
        case .success(let decoded): (base, extra) = decoded
        case .failure(let failure): return .failure(failure)
        }
        guard case .object(let actor)? = extra["actor"], actor.count == 2,
              case .integer(let user)? = actor["user"], user > 0, case .bool(let isRunner)? = actor["runner"] else {
            return .failure(RequestDecodeFailure(id: base.id, error: DomainError(.badRequest,
                "a routed request needs an \"actor\": {\"user\": id, \"runner\": true or false}", field: "actor")))
        }
        return .success(RoutedRequest(id: base.id, operation: base.operation, data: base.data,
                                      actor: RoutedActor(user: UserID(UInt64(user)), isApprovedRunner: isRunner)))
    }
}

/// A routed request in progress on the owner: where its one reply goes.
final class RoutedCall: Sendable {
    let app: Application
    let actor: RoutedActor
    private let answer: @Sendable ([UInt8]) -> Void

    init(app: Application, actor: RoutedActor, answer: @escaping @Sendable ([UInt8]) -> Void) {
        self.app = app
        self.actor = actor
        self.answer = answer
    }

    /// Called once, from any queue, by `OperationContext.reply`.
    func finish(_ context: OperationContext, with result: Result<OperationContext.ReplyData, DomainError>) {
        let (reply, label) = OperationContext.message(for: context.requestID, result)
        answer(reply)
        app.metrics.requests.increment(label: label == "ok" ? context.successLabel : "\(context.operation):\(label)")
        let elapsed = ContinuousClock.now - context.started
        app.metrics.requestLatency.observe(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds),
                                           label: context.operation)
    }
}

enum RoutedOperations {
    /// The operations an owner runs for another node's connection.
    static let names: Set<String> = Set(OrderOperations.all.map(\.name))

    /// Runs the routed request `payload` on this node, which owns the partition it concerns, and
    /// gives `answer` the reply message, exactly once (from any queue). Bad input gets a
    /// `bad_request` or `unknown_operation` reply, never a crash.
    static func run(_ payload: [UInt8], app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let request: RoutedRequest
        switch RoutedRequest.decode(payload) {
        case .success(let decoded): request = decoded
        case .failure(let failure):
            app.metrics.requests.increment(label: "routed:bad_request")
            return answer(Reply.failure(id: failure.id, error: failure.error))
        }
        guard names.contains(request.operation), let operation = OperationTable.shared.operations[request.operation] else {
            app.metrics.requests.increment(label: "routed:unknown_operation")
            return answer(Reply.failure(id: request.id, error: DomainError(.unknownOperation,
                "\"\(request.operation)\" is not an operation a partition's owner runs for another node")))
        }
        let call = RoutedCall(app: app, actor: request.actor, answer: answer)
        let context = OperationContext(caller: .routed(call), requestID: request.id, operation: operation.name,
                                       successLabel: operation.successLabel, started: ContinuousClock.now)
        do {
            try operation.handler(context, try Arguments(request.data))
        } catch {
            context.reply(.failure(error))
        }
    }
}
