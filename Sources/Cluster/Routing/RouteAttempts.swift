// When a node sends a request to the owner of a partition over NATS (`bb.req.p<n>`), what it does
// with each attempt's outcome. Pure, so the rules are tested without NATS and without time.
//
// The rule that matters: a request is sent again only when it certainly was not carried out.
// `noResponders` (NATS had nobody subscribed: no owner right now) and an owner's `notOwner` answer
// (it no longer holds the partition, and refused before doing anything) are such outcomes, so they
// are tried again, with a pause, until the failover bound. A timeout or a lost connection after the
// request left is not: the owner may have committed it, and a publish sent twice is two orders.
// That outcome is unknown, and the caller treats it as the relay treats an owner that changed: it
// closes the client's connection with 1012, and the client resumes and looks, as after any lost
// connection.

public struct RoutePolicy: Sendable, Equatable {
    /// How long a request may wait for a partition to have an owner: a lease time, a recovery
    /// and margin.
    public var boundMilliseconds: Int64
    public var firstPauseMilliseconds: Int64
    public var longestPauseMilliseconds: Int64

    public init(boundMilliseconds: Int64 = 15_000, firstPauseMilliseconds: Int64 = 50, longestPauseMilliseconds: Int64 = 1_000) {
        precondition(boundMilliseconds >= 0 && firstPauseMilliseconds > 0 && longestPauseMilliseconds >= firstPauseMilliseconds)
        self.boundMilliseconds = boundMilliseconds
        self.firstPauseMilliseconds = firstPauseMilliseconds
        self.longestPauseMilliseconds = longestPauseMilliseconds
    }
}

/// What one attempt came to.
public enum RouteOutcome: Sendable, Equatable {
    /// The owner answered.
    case answered([UInt8])
    /// Certainly not carried out: nobody owns the partition right now, or the node that got it
    /// no longer does.
    case notDelivered
    /// Sent, and no answer: carried out or not, nobody can say.
    case unknown
}

public struct RouteAttempts: Sendable {
    public enum Step: Sendable, Equatable {
        case done([UInt8])
        case retry(afterMilliseconds: Int64)
        /// No owner answered within the bound; nothing was carried out.
        case noOwner(attempts: Int)
        case outcomeUnknown
    }

    public let policy: RoutePolicy
    private let started: Int64
    private var pause: Int64
    public private(set) var attempts = 0

    /// A request first sent at `now` (milliseconds, any monotonic clock).
    public init(policy: RoutePolicy = RoutePolicy(), startedAt now: Int64) {
        self.policy = policy
        started = now
        pause = policy.firstPauseMilliseconds
    }

    /// The outcome of the latest attempt, at `now`: what to do next.
    public mutating func next(after outcome: RouteOutcome, at now: Int64) -> Step {
        attempts += 1
        switch outcome {
        case .answered(let reply):
            return .done(reply)
        case .unknown:
            return .outcomeUnknown
        case .notDelivered:
            let remaining = started + policy.boundMilliseconds - now
            guard remaining > 0 else { return .noOwner(attempts: attempts) }
            let wait = min(pause, remaining)
            pause = min(pause * 2, policy.longestPauseMilliseconds)
            return .retry(afterMilliseconds: wait)
        }
    }
}
