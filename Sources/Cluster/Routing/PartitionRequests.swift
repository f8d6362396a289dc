// Requests for a partition's owner over NATS request/reply: subject `bb.req.<partition>`, which the
// owner subscribes to in the queue group `owners` for each partition it holds, so one owner answers
// even while two believe they own it (the stale one is fenced on its first append and answers
// `notOwner`, or exits). The payload is opaque here: what a request and its answer say is the
// server's business.
//
// An answer is one status byte and the body: 0 answered, 1 not the owner (refused before
// anything was done). The requester's rules are `RouteAttempts`: try again only what certainly
// was not carried out, until the failover bound.
import Dispatch
import NATSClient

public enum RouteFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No owner answered within the bound; the request was not carried out.
    case noOwner(PartitionID, attempts: Int)
    /// Sent, and no answer came: it may or may not have been carried out.
    case outcomeUnknown(PartitionID)
    /// It could not be sent at all (too large, the connection closed for good).
    case unsendable(PartitionID, NATSClientError)

    public var description: String {
        switch self {
        case .noOwner(let partition, let attempts): "no owner of \(partition) answered (\(attempts) attempts)"
        case .outcomeUnknown(let partition): "the owner of \(partition) did not answer; the request may have been carried out"
        case .unsendable(let partition, let error): "a request for \(partition) could not be sent: \(error)"
        }
    }
}

public struct PartitionRequests: Sendable {
    public static let queueGroup = "owners"
    static let answeredStatus: UInt8 = 0
    static let notOwnerStatus: UInt8 = 1

    public let connection: NATSConnection
    public var policy: RoutePolicy
    /// How long one attempt waits for its answer.
    public var timeoutMilliseconds: Int

    public init(connection: NATSConnection, policy: RoutePolicy = RoutePolicy(), timeoutMilliseconds: Int = 5_000) {
        self.connection = connection
        self.policy = policy
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public static func subject(of partition: PartitionID) -> String { "bb.req.\(partition)" }

    /// How an owner answers one request: exactly once, from any thread.
    public struct Responder: Sendable {
        let connection: NATSConnection
        let replyTo: String?

        public func answer(_ body: [UInt8]) { send([PartitionRequests.answeredStatus] + body) }

        /// This node does not hold the partition (any more): the requester tries again.
        public func refuseAsNotOwner() { send([PartitionRequests.notOwnerStatus]) }

        private func send(_ payload: [UInt8]) {
            guard let replyTo else { return }
            try? connection.publish(replyTo, payload: payload)
        }
    }

    /// Serves `partition`'s requests until the subscription is cancelled: `handle` gets each
    /// request's payload (on `queue`, or on the connection's loop when nil, where it must not block).
    public func serve(_ partition: PartitionID, deliveringOn queue: DispatchQueue? = nil,
                      handle: @escaping @Sendable (ArraySlice<UInt8>, Responder) -> Void) throws(NATSClientError) -> NATSSubscription {
        try connection.subscribe(to: Self.subject(of: partition), queueGroup: Self.queueGroup, deliveringOn: queue) { [connection] message in
            handle(message.payload, Responder(connection: connection, replyTo: message.replyTo))
        }
    }

    /// Sends `payload` to the owner of `partition` and returns its answer's body.
    public func request(_ partition: PartitionID, payload: [UInt8]) async -> Result<[UInt8], RouteFailure> {
        await withCheckedContinuation { continuation in
            request(partition, payload: payload) { continuation.resume(returning: $0) }
        }
    }

    /// Sends `payload` to the owner of `partition` and hands its answer's body, or why there is
    /// none, to `completion`, once: on the connection's loop (it must be quick), or on a global
    /// queue after a pause between attempts. No task waits, so an answer costs no thread hop.
    public func request(_ partition: PartitionID, payload: [UInt8],
                        completion: @escaping @Sendable (Result<[UInt8], RouteFailure>) -> Void) {
        // Started at the next whole millisecond: the bound is counted in whole milliseconds, and
        // the clock's rounding must not end it before it has run out.
        attempt(partition, payload: payload, RouteAttempts(policy: policy, startedAt: Self.now + 1), completion: completion)
    }

    private func attempt(_ partition: PartitionID, payload: [UInt8], _ attempts: RouteAttempts,
                         completion: @escaping @Sendable (Result<[UInt8], RouteFailure>) -> Void) {
        let decide: @Sendable (Result<NATSMessage, NATSClientError>) -> Void = { result in
            let outcome: RouteOutcome
            switch result {
            case .success(let answer): outcome = Self.outcome(of: answer.payload)
            case .failure(.noResponders), .failure(.outputBufferFull): outcome = .notDelivered
            case .failure(.invalidCommand(let error)): return completion(.failure(.unsendable(partition, .invalidCommand(error))))
            case .failure(.closed): return completion(.failure(.unsendable(partition, .closed)))
            case .failure: outcome = .unknown
            }
            var attempts = attempts
            let next = attempts.next(after: outcome, at: Self.now)
            let tried = attempts
            switch next {
            case .done(let body): completion(.success(body))
            case .outcomeUnknown: completion(.failure(.outcomeUnknown(partition)))
            case .noOwner(let count): completion(.failure(.noOwner(partition, attempts: count)))
            case .retry(let milliseconds):
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(milliseconds))) {
                    attempt(partition, payload: payload, tried, completion: completion)
                }
            }
        }
        do {
            try connection.startRequest(Self.subject(of: partition), payload: payload, timeoutMilliseconds: timeoutMilliseconds,
                                        onReply: decide)
        } catch {
            decide(.failure(error))
        }
    }

    /// An owner's answer: a status byte the requester does not know means a newer or broken
    /// owner, whose outcome cannot be read.
    static func outcome(of payload: ArraySlice<UInt8>) -> RouteOutcome {
        switch payload.first {
        case answeredStatus: .answered(Array(payload.dropFirst()))
        case notOwnerStatus where payload.count == 1: .notDelivered
        default: .unknown
        }
    }

    private static var now: Int64 {
        let elapsed = ContinuousClock.now - referenceInstant
        return elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }
    private static let referenceInstant = ContinuousClock.now
}
