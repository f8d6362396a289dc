// One `/ws` connection's application state: who is logged in, which boards it watches, and
// which personal events it has been sent. It reads requests, runs them through the operation
// table and writes replies; the registry of its loop delivers pushes to it.
//
// Every request first passes two token buckets: this connection's (`--requests-per-second`)
// and, once logged in, its user's, shared by all their connections (`--user-requests-per-second`).
// A refused request gets `rate_limited` with the wait its bucket needs (`retry_after_ms`) and
// costs nothing more; a connection that keeps sending through a whole burst's worth of refusals
// in a row is not a client waiting its turn, and is closed with 1008.
//
// Confined to its connection's event-loop queue (it is a `WebSocketEndpoint`). Operations may
// hop to owners' queues; they come back through `OperationContext.reply`, which posts to this
// loop's outbox (LoopRegistry.swift), so replies and pushes reach the client in the order they
// were made.
//
// Memory: one session per connection, so it holds only its own state. What every session of a
// loop shares (the application, the loop's registry, the per-user limiter) is one `Shared`;
// the feed filter is the watched group's; counters that stay small are 32-bit, and the fields
// are declared so that they pack.
import BangbangCore
import BangbangProtocol
import SocketServer
import WebSocketServer

final class ClientSession: WebSocketEndpoint, @unchecked Sendable {
    /// What every session on one loop shares, made once per loop by the server.
    final class Shared: Sendable {
        let app: Application
        /// The registry and outbox of the loop.
        let registry: LoopRegistry
        let userLimiter: KeyedRateLimiter<UserID>?

        init(app: Application, registry: LoopRegistry, userLimiter: KeyedRateLimiter<UserID>? = nil) {
            self.app = app
            self.registry = registry
            self.userLimiter = userLimiter
        }
    }

    /// Requests a connection may have in flight; more are refused with `rate_limited`, so one
    /// client cannot queue unbounded work on the owners.
    static let maxRequestsInFlight = 64

    /// Who is logged in on the connection: a user and their session, always together.
    private struct Login {
        var user: UserID
        var session: SessionID
    }

    // Declared so that they pack: the optionals' tags and the small fields fill each other's
    // padding.
    let shared: Shared
    /// Strong until the close, which drops it: a weak reference would give the channel a side
    /// table and make every retain of it on the push path the slow kind.
    private(set) var channel: WebSocketChannel?
    /// The registry's group of sessions with this one's feed filter, and this session's place in
    /// it (`watcherSlot`), while it watches the boards. Kept by `LoopRegistry` only.
    var watchedGroup: WatcherGroup?
    /// The last personal-stream sequence this connection was sent (or skipped by a resync).
    private var lastPersonalSequence: UInt64 = 0
    private var login: Login?
    private(set) var isClosed = false
    /// Logged in with the server's admin secret (`auth.admin_secret`): may run `admin.*`
    /// operations as the built-in administrator, and nothing that needs a user.
    private(set) var isBuiltInAdministrator = false
    /// Closed for flooding: the close is queued behind the replies already made.
    private var isClosingForFlood = false
    private var storedWatcherSlot: Int32 = 0
    private var requestBucket: TokenBucket?
    /// At most `maxRequestsInFlight`.
    private var storedRequestsInFlight: UInt8 = 0
    /// Requests refused in a row; reset by any admitted request.
    private var storedConsecutiveRefusals: Int32 = 0

    init(shared: Shared) {
        assert(Self.maxRequestsInFlight <= Int(UInt8.max), "the in-flight count is kept in a byte")
        self.shared = shared
    }

    /// A session with a `Shared` of its own (tests).
    convenience init(app: Application, registry: LoopRegistry, userLimiter: KeyedRateLimiter<UserID>? = nil) {
        self.init(shared: Shared(app: app, registry: registry, userLimiter: userLimiter))
    }

    var app: Application { shared.app }
    /// The registry and outbox of this connection's loop.
    var registry: LoopRegistry { shared.registry }
    private var userLimiter: KeyedRateLimiter<UserID>? { shared.userLimiter }
    var loop: EventLoop { registry.loop }

    /// The boards' filter this connection watches with, if it watches them.
    var feedFilter: FeedFilter? { watchedGroup?.filter }

    var user: UserID? { login?.user }
    var sessionID: SessionID? { login?.session }

    var watcherSlot: Int {
        get { Int(storedWatcherSlot) }
        set { storedWatcherSlot = Int32(newValue) }
    }

    private var requestsInFlight: Int {
        get { Int(storedRequestsInFlight) }
        set { storedRequestsInFlight = UInt8(clamping: newValue) }
    }

    private var consecutiveRefusals: Int {
        get { Int(storedConsecutiveRefusals) }
        set { storedConsecutiveRefusals = Int32(clamping: newValue) }
    }

    // MARK: WebSocketEndpoint

    func webSocketDidOpen(_ channel: WebSocketChannel) {
        self.channel = channel
        let rate = app.connectionRequestRate.withLock { $0 }
        if rate > 0 {
            requestBucket = TokenBucket(ratePerSecond: rate, capacity: rate * 2, now: channel.loop.now)
        }
    }

    /// The connection's id for log lines.
    var connectionID: UInt64 { channel?.connectionID ?? 0 }

    func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {
        let decoded = bytes.withUnsafeBytes { Request.decode($0) }
        switch decoded {
        case .failure(let failure):
            app.metrics.requests.increment(label: "invalid:bad_request")
            sendInOrder(Reply.failure(id: failure.id, error: failure.error))
        case .success(let request):
            handle(request)
        }
    }

    func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) {
        channel.close(code: .unsupportedData, reason: "this endpoint speaks JSON text messages only")
    }

    func webSocketDidClose(_ channel: WebSocketChannel) {
        isClosed = true
        self.channel = nil
        if let user { registry.unregister(self, as: user) }
        if feedFilter != nil { registry.stopWatching(self) }
    }

    // MARK: Requests

    /// Runs the checks that come before an operation's own in the order of protocol/README.md,
    /// "Error precedence" (`bad_request` was answered when decoding): `unknown_operation`, the
    /// request rates (`rate_limited`), `unauthenticated`; the operation then checks its fields,
    /// who may do it, what it names and the state, in that order.
    private func handle(_ request: Request) {
        let known = OperationTable.shared.operations[request.operation]
        // Every request takes a token, an unknown one too, so a flood of made-up names is closed
        // like any other; an unknown name is still answered as such.
        let admission = admit(request, isKnown: known != nil)
        if case .closed = admission { return }
        if app.logger.level <= .debug {
            app.logger.debug("request", ["connection.id": connectionID, "request.id": Self.describe(request.id),
                                         "op": request.operation, "user": user.map { "\($0)" } ?? "-"])
        }
        guard let operation = known else {
            app.metrics.requests.increment(label: "unknown:unknown_operation")
            sendInOrder(Reply.failure(id: request.id, error: DomainError(.unknownOperation,
                "unknown operation \"\(request.operation)\"; see protocol/operations.md")))
            return
        }
        if case .refused(let error) = admission {
            sendInOrder(Reply.failure(id: request.id, error: error))
            return
        }
        guard requestsInFlight < Self.maxRequestsInFlight else {
            app.metrics.requests.increment(label: "\(operation.name):rate_limited")
            // No clock to wait for: a slot frees when one of the replies arrives.
            sendInOrder(Reply.failure(id: request.id, error: .rateLimited(
                "more than \(Self.maxRequestsInFlight) requests in flight on this connection; wait for replies",
                retryAfterMilliseconds: 0)))
            return
        }
        let context = OperationContext(session: self, requestID: request.id, operation: operation.name,
                                       successLabel: operation.successLabel, started: ContinuousClock.now)
        if operation.requiresLogin, user == nil, isBuiltInAdministrator {
            // The built-in administrator is logged in, but as no user: at this step, where a
            // connection without a login hears `unauthenticated`, it hears `forbidden`.
            guard operation.name.hasPrefix("admin.") else {
                context.reply(.failure(DomainError(.forbidden, "the admin secret grants admin.* operations only")))
                return
            }
        } else if operation.requiresLogin, user == nil {
            context.reply(.failure(DomainError(.unauthenticated, "log in first (auth.login_code, auth.login_password or auth.resume)")))
            return
        }
        requestsInFlight += 1
        do {
            let arguments = try Arguments(request.data)
            try operation.handler(context, arguments)
        } catch {
            context.reply(.failure(error))
        }
    }

    /// Sends a reply made on the loop behind the replies already in the outbox, so a client
    /// that sends several requests hears back in the order they were answered.
    private func sendInOrder(_ reply: [UInt8]) {
        registry.post { [self] in channel?.send(text: reply) }
    }

    /// Called on this session's loop, from its outbox, for `OperationContext.reply`.
    func finish(_ context: OperationContext, with result: Result<OperationContext.ReplyData, DomainError>) {
        requestsInFlight = max(0, requestsInFlight - 1)
        let (reply, label) = OperationContext.message(for: context.requestID, result)
        channel?.send(text: reply)
        app.metrics.requests.increment(label: label == "ok" ? context.successLabel : "\(context.operation):\(label)")
        if app.logger.level <= .debug {
            app.logger.debug("reply", ["connection.id": connectionID, "request.id": Self.describe(context.requestID),
                                       "op": context.operation, "result": label])
        }
        let elapsed = ContinuousClock.now - context.started
        app.metrics.requestLatency.observe(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds),
                                           label: context.operation)
    }

    private enum Admission {
        case admitted
        /// Over a request rate: the `rate_limited` error to answer with.
        case refused(DomainError)
        /// The connection was closed for flooding (or already closing): answer nothing.
        case closed
    }

    /// Takes a token from the connection's and the user's buckets. A refusal is counted (and a
    /// flooding connection closed) here; the caller answers it, after `unknown_operation`.
    private func admit(_ request: Request, isKnown: Bool) -> Admission {
        // Once closing (a flood already closed it), nothing more is answered or counted.
        guard let channel, channel.isOpen, !isClosingForFlood else { return .closed }
        var refusedBy: String?
        var wait: Int64 = 0
        if requestBucket != nil || (userLimiter != nil && user != nil) {
            let now = channel.loop.now
            if requestBucket?.take(now: now) == false {
                refusedBy = "connection"
                wait = requestBucket?.millisecondsUntilToken(now: now) ?? 0
            } else if let user, let userLimiter, let userWait = userLimiter.take(user, now: now) {
                refusedBy = "user"
                wait = userWait
            }
        }
        guard let refusedBy else {
            consecutiveRefusals = 0
            return .admitted
        }
        consecutiveRefusals += 1
        let allowance = max(requestBucket?.capacity ?? 0, userLimiter?.capacity ?? 0)
        if consecutiveRefusals > allowance {
            app.metrics.rateLimited.increment(label: "flood")
            app.logger.warning("connection_flooding", ["connection.id": connectionID, "refused": consecutiveRefusals,
                                                       "limit": refusedBy])
            // Behind the replies already in the outbox, which the client is still sent.
            isClosingForFlood = true
            registry.post { [self] in
                self.channel?.close(code: .policyViolation, reason: "request rate limit exceeded repeatedly")
            }
            return .closed
        }
        // An unknown operation is answered `unknown_operation`, and counted as that.
        guard isKnown else { return .admitted }
        app.metrics.rateLimited.increment(label: refusedBy)
        app.metrics.requests.increment(label: "\(request.operation):rate_limited")
        if consecutiveRefusals == 1 {
            app.logger.info("rate_limited", ["connection.id": connectionID, "request.id": Self.describe(request.id),
                                             "limit": refusedBy, "user": user.map { "\($0)" } ?? "-"])
        }
        let message = refusedBy == "connection"
            ? "too many requests on this connection (limit \(app.configuration.requestsPerSecond)/s); slow down"
            : "too many requests for this user across connections (limit \(app.configuration.userRequestsPerSecond)/s); slow down"
        return .refused(.rateLimited(message, retryAfterMilliseconds: wait))
    }

    /// A request id as the client sent it, for logs (ids are the client's and never secret).
    static func describe(_ id: JSONValue) -> String {
        switch id {
        case .string(let text): text
        case .integer(let value): String(value)
        default: "-"
        }
    }

    // MARK: Login state

    /// Logs this connection in as the built-in administrator (after `auth.admin_secret`).
    func logInAsBuiltInAdministrator() {
        logOut()
        isBuiltInAdministrator = true
    }

    /// Logs this connection in and replays what it missed after `lastSeenSequence`
    /// (nil: a fresh login, which starts at the stream's current end). Returns the reply fields.
    func logIn(as user: UserID, session: SessionID, lastSeenSequence: UInt64?) -> (sequence: UInt64, resync: Bool) {
        // A login that completes after the connection closed registers nothing: the registry
        // would otherwise keep a closed session.
        guard !isClosed else { return (0, false) }
        isBuiltInAdministrator = false
        if let previous = self.user { registry.unregister(self, as: previous) }
        login = Login(user: user, session: session)
        var missed: [[UInt8]] = []
        var resync = false
        let replay = app.publisher.accounts.streams.replay(for: user, after: lastSeenSequence ?? .max, now: app.clock()) { current in
            // Under the stream lock: from here on, live deliveries for this user reach us in order.
            registry.register(self, as: user)
            lastPersonalSequence = current
        }
        switch replay {
        case .events(let messages, let last):
            missed = messages
            lastPersonalSequence = last
        case .resync(let last):
            resync = true
            lastPersonalSequence = last
        }
        for message in missed { channel?.send(text: message) }
        return (lastPersonalSequence, resync)
    }

    /// Stops live personal events reaching this connection until the next `logIn` (which
    /// replays from where it asks). Used while a login on it is being published.
    func holdPersonalEvents() {
        if let user { registry.unregister(self, as: user) }
    }

    /// Runs `work` on this connection's loop after everything already posted to its outbox
    /// (replies, pushes). Any thread.
    func post(_ work: @escaping @Sendable () -> Void) {
        registry.post(work)
    }

    func logOut() {
        isBuiltInAdministrator = false
        if let user { registry.unregister(self, as: user) }
        login = nil
        if feedFilter != nil { registry.stopWatching(self) }
    }

    func watch(_ filter: FeedFilter?) {
        // A closed session is never registered again: the registry would keep it.
        guard !isClosed else { return }
        if let filter { registry.startWatching(self, with: filter) } else { registry.stopWatching(self) }
    }

    // MARK: Pushes (on this loop)

    func deliverPersonal(sequence: UInt64, message: SharedMessage) {
        guard sequence > lastPersonalSequence, let channel, channel.isOpen else { return }
        lastPersonalSequence = sequence
        app.metrics.pushesSent.increment()
        channel.send(shared: message)
    }
}
