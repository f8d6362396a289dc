// One `/ws` connection's application state: who is logged in, which boards it watches, and
// which personal events it has been sent. It reads requests, runs them through the operation
// table and writes replies; the registry of its loop delivers pushes to it.
//
// Confined to its connection's event-loop queue (it is a `WebSocketEndpoint`). Operations may
// hop to owners' queues; they come back through `OperationContext.reply`, which returns here.
import BangbangCore
import BangbangProtocol
import SocketServer

final class ClientSession: WebSocketEndpoint, @unchecked Sendable {
    /// Requests a connection may have in flight; more are refused with `rate_limited`, so one
    /// client cannot queue unbounded work on the owners.
    static let maxRequestsInFlight = 64

    let app: Application
    private(set) weak var channel: WebSocketChannel?
    private(set) var registry: LoopRegistry?
    private(set) var user: UserID?
    private(set) var sessionID: SessionID?
    private(set) var feedFilter: FeedFilter?
    /// The last personal-stream sequence this connection was sent (or skipped by a resync).
    private var lastPersonalSequence: UInt64 = 0
    private var requestsInFlight = 0
    private(set) var isClosed = false

    init(app: Application) { self.app = app }

    var loop: EventLoop? { channel?.connection.loop }

    // MARK: WebSocketEndpoint

    func webSocketDidOpen(_ channel: WebSocketChannel) {
        self.channel = channel
        registry = app.registry(for: channel.connection.loop)
    }

    func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {
        let decoded = bytes.withUnsafeBytes { Request.decode($0) }
        switch decoded {
        case .failure(let failure):
            app.metrics.requests.increment(label: "invalid:bad_request")
            channel.send(text: Reply.failure(id: failure.id, error: failure.error))
        case .success(let request):
            handle(request)
        }
    }

    func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) {
        channel.close(code: .unsupportedData, reason: "this endpoint speaks JSON text messages only")
    }

    func webSocketDidClose(_ channel: WebSocketChannel) {
        isClosed = true
        if let user { registry?.unregister(self, as: user) }
        if feedFilter != nil { registry?.stopWatching(self) }
        feedFilter = nil
    }

    // MARK: Requests

    private func handle(_ request: Request) {
        guard let operation = OperationTable.shared.operations[request.operation] else {
            app.metrics.requests.increment(label: "unknown:unknown_operation")
            channel?.send(text: Reply.failure(id: request.id, error: DomainError(.unknownOperation,
                "unknown operation \"\(request.operation)\"; see protocol/operations.md")))
            return
        }
        guard requestsInFlight < Self.maxRequestsInFlight else {
            channel?.send(text: Reply.failure(id: request.id, error: DomainError(.rateLimited,
                "more than \(Self.maxRequestsInFlight) requests in flight on this connection; wait for replies")))
            return
        }
        let context = OperationContext(session: self, request: request, operation: operation.name,
                                       started: ContinuousClock.now)
        if operation.requiresLogin, user == nil {
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

    /// Called on this session's loop by `OperationContext.reply`.
    func finish(_ context: OperationContext, with result: Result<JSONValue, DomainError>) {
        requestsInFlight = max(0, requestsInFlight - 1)
        let label: String
        switch result {
        case .success(let data):
            label = "ok"
            channel?.send(text: Reply.success(id: context.request.id, data: data))
        case .failure(let error):
            label = error.code.rawValue
            channel?.send(text: Reply.failure(id: context.request.id, error: error))
        }
        app.metrics.requests.increment(label: "\(context.operation):\(label)")
        let elapsed = ContinuousClock.now - context.started
        app.metrics.requestLatency.observe(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds),
                                           label: context.operation)
    }

    // MARK: Login state

    /// Logs this connection in and replays what it missed after `lastSeenSequence`
    /// (nil: a fresh login, which starts at the stream's current end). Returns the reply fields.
    func logIn(as user: UserID, session: SessionID, lastSeenSequence: UInt64?) -> (sequence: UInt64, resync: Bool) {
        if let previous = self.user { registry?.unregister(self, as: previous) }
        self.user = user
        self.sessionID = session
        var missed: [[UInt8]] = []
        var resync = false
        let replay = app.streams.replay(for: user, after: lastSeenSequence ?? .max, now: app.clock()) { current in
            // Under the stream lock: from here on, live deliveries for this user reach us in order.
            registry?.register(self, as: user)
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

    func logOut() {
        if let user { registry?.unregister(self, as: user) }
        user = nil
        sessionID = nil
        if feedFilter != nil { registry?.stopWatching(self) }
        feedFilter = nil
    }

    func watch(_ filter: FeedFilter?) {
        feedFilter = filter
        if filter == nil { registry?.stopWatching(self) } else { registry?.startWatching(self) }
    }

    // MARK: Pushes (on this loop)

    func deliverPersonal(sequence: UInt64, message: SharedMessage) {
        guard sequence > lastPersonalSequence, let channel, channel.isOpen else { return }
        lastPersonalSequence = sequence
        app.metrics.pushesSent.increment()
        channel.send(shared: message)
    }

    func deliverFeed(_ broadcast: FeedBroadcast) {
        guard let feedFilter, let channel, channel.isOpen,
              let kind = feedFilter.change(before: broadcast.change.before, after: broadcast.change.after) else { return }
        app.metrics.pushesSent.increment()
        channel.send(shared: broadcast.message(for: kind))
    }
}
