// Where a request is admitted: the checks every `/ws` request passes before its operation runs,
// in the order of protocol/README.md, "Error precedence" (`bad_request` is answered when the
// message is decoded, before this):
//   1. every request takes a token from its connection's bucket (`--requests-per-second`) and,
//      once logged in, from its user's, shared by all their connections
//      (`--user-requests-per-second`): an unknown name too, so a flood of made-up names is
//      closed like any other;
//   2. `unknown_operation`, for a name the operation table does not have;
//   3. `rate_limited` with the wait the refusing bucket needs (`retry_after_ms`); a connection
//      that keeps sending through a whole burst's worth of refusals in a row is not a client
//      waiting its turn, and is closed with 1008;
//   4. `rate_limited` when `maxRequestsInFlight` requests wait for their replies, so one client
//      cannot queue unbounded work on the owners;
//   5. `unauthenticated` for an operation that needs a login, or `forbidden` when the
//      connection is the built-in administrator's (logged in, but as no user) and the operation
//      is not administration.
// The operation then checks its fields, who may do it, what it names and the state, in that order.
//
// Sans-I/O and written once: a session on the owner (ClientSession) and a session on a cluster
// node (ScaleOut's NodeSession) each keep one per connection and drive it with the request's
// name, who is logged in and the time; it returns what to do, and the session answers, closes or
// runs, and counts and logs what the decision names. Kept small: one per connection, packed.
import BangbangCore
import BangbangProtocol
import WebSocketServer

package struct RequestAdmission: Sendable {
    /// Requests a connection may have in flight; more are refused with `rate_limited`.
    static let maxRequestsInFlight = 64

    /// Who the connection is logged in as, as admission sees it.
    package enum Login: Sendable, Equatable {
        case none
        case user(UserID)
        /// `auth.admin_secret`: may run administration, and nothing that needs a user.
        case builtInAdministrator
    }

    package enum Decision: Sendable {
        /// Run it: it is counted in flight until `finish`.
        case run(Operation)
        /// Answer `error` and nothing more. `label` is the request counter's (`order.publish:rate_limited`,
        /// `unknown:unknown_operation`); `limit`, when a request rate refused it, the rate-limit
        /// counter's (`connection` or `user`), and `isFirstRefusal` whether it starts a run of them.
        case refuse(DomainError, label: String, limit: String? = nil, isFirstRefusal: Bool = false)
        /// Close the connection with 1008, behind what was already sent: it went on through
        /// `refusals` refusals of `limit` in a row.
        case closeForFlooding(limit: String, refusals: Int)
        /// The connection is closing for flooding: nothing more is answered or counted.
        case ignore
    }

    private var connectionBucket: TokenBucket?
    private var consecutiveRefusals: Int32 = 0
    private var inFlight: UInt8 = 0
    private var isClosingForFlood = false

    /// `requestsPerSecond`: the connection's rate (burst twice that), 0 for no limit.
    package init(requestsPerSecond: Int, now: Int64) {
        assert(Self.maxRequestsInFlight <= Int(UInt8.max), "the in-flight count is kept in a byte")
        if requestsPerSecond > 0 {
            connectionBucket = TokenBucket(ratePerSecond: requestsPerSecond, capacity: requestsPerSecond * 2, now: now)
        }
    }

    var requestsInFlight: Int { Int(inFlight) }

    /// Admits or refuses the request for `name` from a connection logged in as `login` at `now`
    /// (milliseconds on the loop's clock); `users` is the per-user limiter, if there is one.
    package mutating func admit(_ name: String, login: Login, users: KeyedRateLimiter<UserID>?, now: Int64,
                        operations: OperationTable = .shared) -> Decision {
        guard !isClosingForFlood else { return .ignore }
        let operation = operations.operations[name]
        var refusal: (limit: String, wait: Int64)?
        if connectionBucket?.take(now: now) == false {
            refusal = ("connection", connectionBucket?.millisecondsUntilToken(now: now) ?? 0)
        } else if case .user(let user) = login, let users, let wait = users.take(user, now: now) {
            refusal = ("user", wait)
        }
        if let refusal {
            consecutiveRefusals = consecutiveRefusals &+ 1
            let allowance = max(connectionBucket?.capacity ?? 0, users?.capacity ?? 0)
            if Int(consecutiveRefusals) > allowance {
                isClosingForFlood = true
                return .closeForFlooding(limit: refusal.limit, refusals: Int(consecutiveRefusals))
            }
        } else {
            consecutiveRefusals = 0
        }
        guard let operation else {
            return .refuse(DomainError(.unknownOperation, "unknown operation \"\(name)\"; see protocol/operations.md"),
                           label: "unknown:unknown_operation")
        }
        if let refusal {
            let message = refusal.limit == "connection"
                ? "too many requests on this connection (limit \(connectionBucket?.ratePerSecond ?? 0)/s); slow down"
                : "too many requests for this user across connections (limit \(users?.ratePerSecond ?? 0)/s); slow down"
            return .refuse(.rateLimited(message, retryAfterMilliseconds: refusal.wait), label: "\(name):rate_limited",
                           limit: refusal.limit, isFirstRefusal: consecutiveRefusals == 1)
        }
        guard requestsInFlight < Self.maxRequestsInFlight else {
            // No clock to wait for: a slot frees when one of the replies arrives.
            return .refuse(.rateLimited("more than \(Self.maxRequestsInFlight) requests in flight on this connection; wait for replies",
                                        retryAfterMilliseconds: 0), label: "\(name):rate_limited")
        }
        if operation.requiresLogin {
            switch login {
            case .user: break
            case .builtInAdministrator where operation.isAdministration: break
            case .builtInAdministrator:
                return .refuse(DomainError(.forbidden, "the admin secret grants admin.* operations only"), label: "\(name):forbidden")
            case .none:
                return .refuse(DomainError(.unauthenticated, "log in first (auth.login_code, auth.login_password or auth.resume)"),
                               label: "\(name):unauthenticated")
            }
        }
        inFlight += 1
        return .run(operation)
    }

    /// A request admitted to run has had its reply.
    package mutating func finish() {
        if inFlight > 0 { inFlight -= 1 }
    }

    /// A request id as the client sent it, for logs (ids are the client's and never secret).
    static func describe(_ id: JSONValue) -> String {
        switch id {
        case .string(let text): text
        case .integer(let value): String(value)
        default: "-"
        }
    }
}

extension RequestAdmission.Decision {
    /// Counts what the decision names in `metrics`; logs a run of refusals as it starts and a
    /// close for flooding. `connectionID` and `user` are for the log lines.
    package func count(in metrics: ServerMetrics, logger: Logger, connectionID: UInt64, requestID: JSONValue, user: UserID?) {
        switch self {
        case .run, .ignore:
            break
        case .refuse(_, let label, let limit, let isFirstRefusal):
            metrics.requests.increment(label: label)
            guard let limit else { return }
            metrics.rateLimited.increment(label: limit)
            if isFirstRefusal {
                logger.info("rate_limited", ["connection.id": connectionID, "request.id": RequestAdmission.describe(requestID),
                                             "limit": limit, "user": user.map { "\($0)" } ?? "-"])
            }
        case .closeForFlooding(let limit, let refusals):
            metrics.rateLimited.increment(label: "flood")
            logger.warning("connection_flooding", ["connection.id": connectionID, "refused": refusals, "limit": limit])
        }
    }
}
