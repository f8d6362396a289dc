// The requesting side of routing: a request about an order whose board partition another node owns
// is sent to that owner (RoutedOperations.swift runs it there) and the owner's answer is the
// client's reply, byte for byte. When it cannot be answered, the client hears what each case
// promises: no owner within the bound (a failover that outlasted it) is `storage_unavailable`,
// since nothing was done and a retry is safe; a request sent and never answered may have been
// carried out, so the connection is closed with 1012 as on an owner change, and the client
// reconnects, resumes and looks, as it already does after a restart.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import PartitionOwner
import WebSocketProtocol

package struct NodeRouter: Sendable {
    /// What the client's connection gets.
    package enum Outcome: Sendable, Equatable {
        /// The reply message, for the request's id.
        case reply([UInt8])
        /// Close the connection: the request's outcome is unknown.
        case close(CloseCode, reason: String)
    }

    package let requests: PartitionRequests
    /// The partitions this node owns, whose requests are run in the process (LocalOwners.swift).
    var local: LocalOwners? = nil

    /// Sends `request` to the owner of `partition` and says what its connection gets.
    func route(_ request: RoutedRequest, to partition: PartitionID) async -> Outcome {
        await withCheckedContinuation { continuation in route(request, to: partition) { continuation.resume(returning: $0) } }
    }

    /// As `route(_:to:)`, with the outcome handed to `completion` (once; it may run on the NATS
    /// connection's loop).
    func route(_ request: RoutedRequest, to partition: PartitionID, completion: @escaping @Sendable (Outcome) -> Void) {
        let id = request.id
        ask(partition, payload: request.encoded()) { completion(Self.outcome(of: $0, for: id)) }
    }

    /// Sends an encoded request to the owner of `partition`: run in the process when this node
    /// serves it, over NATS otherwise. `completion` runs once, from any thread.
    func ask(_ partition: PartitionID, payload: [UInt8], completion: @escaping @Sendable (Result<[UInt8], RouteFailure>) -> Void) {
        if let local, local.answer(partition, payload: payload, answer: { completion(.success($0)) }) { return }
        requests.request(partition, payload: payload, completion: completion)
    }

    /// Sends `request` to the owner of the partition that decides it (`RoutedOperations.partition`).
    /// One that names none (without its campus, order id, phone, user or actor) goes to the first
    /// partition of its space, whose owner answers it with the operation's own refusal.
    func route(_ request: RoutedRequest, in map: PartitionMap) async -> Outcome {
        await route(request, to: Self.partition(of: request, in: map))
    }

    /// As `route(_:in:)`, with the outcome handed to `completion` (once, quickly: it may run on the
    /// NATS connection's loop) rather than awaited: no task per request.
    func route(_ request: RoutedRequest, in map: PartitionMap, completion: @escaping @Sendable (Outcome) -> Void) {
        route(request, to: Self.partition(of: request, in: map), completion: completion)
    }

    private static func partition(of request: RoutedRequest, in map: PartitionMap) -> PartitionID {
        RoutedOperations.partition(of: request, in: map) ?? PartitionID(space: RoutedOperations.space(of: request.operation), index: 0)
    }

    static func outcome(of result: Result<[UInt8], RouteFailure>, for id: JSONValue) -> Outcome {
        switch result {
        case .success(let reply):
            return .reply(reply)
        case .failure(.noOwner(let partition, _)):
            return .reply(Reply.failure(id: id, error: DomainError(.storageUnavailable,
                "partition \(partition) has no owner right now (a node is taking it over); nothing was changed, try again shortly")))
        case .failure(.unsendable(_, let error)):
            return .reply(Reply.failure(id: id, error: DomainError(.storageUnavailable,
                "the request could not be passed on (\(error)); nothing was changed, try again later")))
        case .failure(.outcomeUnknown(let partition)):
            return .close(.serviceRestart, reason: "owner of \(partition) did not answer; resume to see what was done")
        }
    }
}
