// One `/ws` connection's application state: who is logged in, which boards it watches, and
// which personal events it has been sent. It reads requests, runs them through the operation
// table and writes replies; the registry of its loop delivers pushes to it.
//
// Every request is first admitted (RequestAdmission.swift: the request rates, the operation's
// name, the requests in flight, the login), then run by its operation.
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

package final class ClientSession: WebSocketEndpoint, @unchecked Sendable {
    /// What every session on one loop shares, made once per loop by the server.
    package final class Shared: Sendable {
        let app: Application
        /// The registry and outbox of the loop.
        let registry: LoopRegistry
        package let userLimiter: KeyedRateLimiter<UserID>?

        package init(app: Application, registry: LoopRegistry, userLimiter: KeyedRateLimiter<UserID>? = nil) {
            self.app = app
            self.registry = registry
            self.userLimiter = userLimiter
        }
    }

    /// Who is logged in on the connection: a user and their session, always together.
    private struct Login {
        package var user: UserID
        package var session: SessionID
    }

    // Declared so that they pack: the optionals' tags and the small fields fill each other's
    // padding.
    package let shared: Shared
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
    private var storedWatcherSlot: Int32 = 0
    /// Set when the connection opens, with the request rate then in force.
    private var admission = RequestAdmission(requestsPerSecond: 0, now: 0)

    package init(shared: Shared) {
        self.shared = shared
    }

    /// A session with a `Shared` of its own (tests).
    package convenience init(app: Application, registry: LoopRegistry, userLimiter: KeyedRateLimiter<UserID>? = nil) {
        self.init(shared: Shared(app: app, registry: registry, userLimiter: userLimiter))
    }

    var app: Application { shared.app }
    /// The registry and outbox of this connection's loop.
    var registry: LoopRegistry { shared.registry }
    private var userLimiter: KeyedRateLimiter<UserID>? { shared.userLimiter }
    package var loop: EventLoop { registry.loop }

    /// The boards' filter this connection watches with, if it watches them.
    var feedFilter: FeedFilter? { watchedGroup?.filter }

    package var user: UserID? { login?.user }
    var sessionID: SessionID? { login?.session }

    var watcherSlot: Int {
        get { Int(storedWatcherSlot) }
        set { storedWatcherSlot = Int32(newValue) }
    }

    // MARK: WebSocketEndpoint

    package func webSocketDidOpen(_ channel: WebSocketChannel) {
        self.channel = channel
        admission = RequestAdmission(requestsPerSecond: app.connectionRequestRate.withLock { $0 }, now: channel.loop.now)
    }

    /// The connection's id for log lines.
    var connectionID: UInt64 { channel?.connectionID ?? 0 }

    package func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {
        let decoded = bytes.withUnsafeBytes { Request.decode($0) }
        switch decoded {
        case .failure(let failure):
            app.metrics.requests.increment(label: "invalid:bad_request")
            sendInOrder(Reply.failure(id: failure.id, error: failure.error))
        case .success(let request):
            handle(request)
        }
    }

    package func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) {
        channel.close(code: .unsupportedData, reason: "this endpoint speaks JSON text messages only")
    }

    package func webSocketDidClose(_ channel: WebSocketChannel) {
        isClosed = true
        self.channel = nil
        if let user { registry.unregister(self, as: user) }
        if feedFilter != nil { registry.stopWatching(self) }
    }

    // MARK: Requests

    /// Admits the request (RequestAdmission.swift) and runs its operation, or answers why not.
    private func handle(_ request: Request) {
        guard let channel, channel.isOpen else { return }
        let login: RequestAdmission.Login = if let user { .user(user) } else if isBuiltInAdministrator { .builtInAdministrator } else { .none }
        let decision = admission.admit(request.operation, login: login, users: userLimiter, now: channel.loop.now)
        decision.count(in: app.metrics, logger: app.logger, connectionID: connectionID, requestID: request.id, user: user)
        switch decision {
        case .ignore:
            return
        case .closeForFlooding:
            // Behind the replies already in the outbox, which the client is still sent.
            registry.post { [self] in
                self.channel?.close(code: .policyViolation, reason: "request rate limit exceeded repeatedly")
            }
        case .refuse(let error, _, _, _):
            sendInOrder(Reply.failure(id: request.id, error: error))
        case .run(let operation):
            if app.logger.level <= .debug {
                app.logger.debug("request", ["connection.id": connectionID, "request.id": RequestAdmission.describe(request.id),
                                             "op": request.operation, "user": user.map { "\($0)" } ?? "-"])
            }
            let context = OperationContext(session: self, requestID: request.id, operation: operation.name,
                                           successLabel: operation.successLabel, started: ContinuousClock.now)
            do {
                let arguments = try Arguments(request.data)
                try operation.handler(context, arguments)
            } catch {
                context.reply(.failure(error))
            }
        }
    }

    /// Sends a reply made on the loop behind the replies already in the outbox, so a client
    /// that sends several requests hears back in the order they were answered.
    private func sendInOrder(_ reply: [UInt8]) {
        registry.post { [self] in channel?.send(text: reply) }
    }

    /// Called on this session's loop, from its outbox, for `OperationContext.reply`.
    package func finish(_ context: OperationContext, with result: Result<OperationContext.ReplyData, DomainError>) {
        admission.finish()
        let (reply, label) = OperationContext.message(for: context.requestID, result)
        channel?.send(text: reply)
        app.metrics.requests.increment(label: label == "ok" ? context.successLabel : "\(context.operation):\(label)")
        if app.logger.level <= .debug {
            app.logger.debug("reply", ["connection.id": connectionID, "request.id": RequestAdmission.describe(context.requestID),
                                       "op": context.operation, "result": label])
        }
        let elapsed = ContinuousClock.now - context.started
        app.metrics.requestLatency.observe(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds),
                                           label: context.operation)
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
