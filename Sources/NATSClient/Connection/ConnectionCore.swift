// The connection's machinery: one socket at a time on one event loop, the handshake,
// keepalive, reconnection, and the routing of what arrives.
//
// Theory of operation
// -------------------
// Two kinds of state, kept apart:
//   - `shared`, behind a mutex, is what callers on any thread touch: the pending output (every
//     command is encoded straight into it, in call order), the subscription registry, the
//     pending requests and their deadlines (one timer for all), the server's INFO. A publish is
//     an append under the lock; the first append after a drain schedules one drain on the loop,
//     so a burst of publishes costs one queue hop and leaves in one write.
//   - Everything else (the socket, the parser, the phase, the PONGs expected, the keepalive and
//     reconnect timers) is confined to `loop.queue`.
//
// Phases of one socket: connecting → awaiting INFO → handshaking (CONNECT, every SUB, PING sent;
// waiting for that PONG) → connected. Only when connected is the pending output drained to the
// socket, so nothing a caller queued can overtake CONNECT, and commands queued while the
// connection was down (including the SUBs of new subscriptions) go out once it is back. Every
// subscription is re-sent during the handshake; a SUB also still queued in the pending output
// then reaches the server twice with the same sid, which the server ignores.
//
// When the socket ends for any reason but `close()`, the next server of the pool is tried
// (ServerPool.swift decides which and after what wait). What was handed to the lost socket is
// lost with it, as core NATS is at most once: PONG waiters (flush) fail with `.connectionLost`;
// requests awaited by a task keep waiting for their own timeout, since their reply may still
// come over the next socket (the inbox subscription is made again with the same name). Requests
// made with a callback fail with `.connectionLost` at once: their callers (a journal's append
// pipeline) publish again with the same message id, which JetStream answers as a duplicate if
// the first copy was stored, so an append lost with a server costs a reconnect, not a timeout.
//
// Keepalive: every `pingIntervalMilliseconds` while connected the client PINGs; when
// `maxPingsOutstanding` PINGs are unanswered the socket is closed and replaced. The server's
// own PINGs are answered at once.
//
// Delivery: a message for a subscription with a delivery queue is gathered with the other
// messages of the same read for that subscription and handed over in one `queue.async`; a
// subscription without a queue is called on the loop itself. Replies to requests arrive on one
// wildcard inbox subscription (`_INBOX.<random>.*`, sid 1) and are routed by their last token,
// to the task awaiting the request or, for a request made with a callback, to that callback on
// the loop.
import Dispatch
import NATSProtocol
import SocketServer
import Synchronization

/// Sid of the inbox subscription that carries every reply.
let inboxSubscriptionID: UInt64 = 1

final class ConnectionCore: ConnectionHandler, @unchecked Sendable {
    // Confinement: `shared` is guarded by its mutex and may be used from any thread; every
    // other mutable property is touched only on `loop.queue`.

    enum Phase {
        case idle
        case connecting
        case awaitingInfo
        case handshaking
        case connected
        case waitingToReconnect
        case closed
    }

    enum PongExpectation {
        case handshake
        case keepalive
        case flush(ResumeOnce<Result<Void, NATSClientError>>)
    }

    struct Shared {
        var output: [UInt8] = []
        var isDrainScheduled = false
        var isWritable = false
        var isClosed = false
        var subscriptions: [UInt64: Subscription] = [:]
        var nextSubscriptionID: UInt64 = inboxSubscriptionID + 1
        var inboxEntries: [UInt64: InboxEntry] = [:]
        var requestDeadlines = RequestDeadlines()
        var nextInboxToken: UInt64 = 0
        var serverInfo: ServerInfo?
        var connectedServer: NATSServerAddress?
        var maxPayload = 1024 * 1024
        var reconnectCount = 0
        var connectWaiters: [CheckedContinuation<Result<Void, NATSClientError>, Never>] = []
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// A request waiting for its reply; one reply ends it.
    enum InboxEntry {
        /// A task awaits it.
        case reply(PendingReply)
        /// The answer is handed to a closure on the loop (every resolution happens there: a
        /// reply, the request's timer, `close()`).
        case callback(subject: String, @Sendable (Result<NATSMessage, NATSClientError>) -> Void)

        func resolve(_ result: Result<NATSMessage, NATSClientError>) {
            switch self {
            case .reply(let pending):
                pending.resolve(result)
            case .callback(let subject, let onReply):
                if case .failure(.noResponders) = result {
                    onReply(.failure(.noResponders(subject: subject)))
                } else {
                    onReply(result)
                }
            }
        }
    }

    let loop: EventLoop
    let configuration: NATSConfiguration
    let shared = Mutex(Shared())
    /// `_INBOX.<random>.`: replies to this connection's requests.
    let inboxPrefix: String

    private var phase = Phase.idle
    private var socket: Connection?
    private var parser: OperationParser
    private var pool: ServerPool
    private var random = SystemRandomNumberGenerator()
    private var pongExpectations: [PongExpectation] = []
    /// Flushes asked for while no socket was up; their PINGs go out after the next handshake.
    private var deferredFlushes: [ResumeOnce<Result<Void, NATSClientError>>] = []
    private var pingsOutstanding = 0
    /// Bumped for every socket, so timers armed for an earlier one do nothing.
    private var generation = 0
    private var isSocketBackpressured = false
    private var lastFailure = "none"
    private var hasConnectedOnce = false
    private var pendingParserLimits: ParserLimits?
    private var isParserPoisoned = false
    /// Subscriptions with messages gathered during the current read, in first-seen order.
    var batchedSubscriptions: [Subscription] = []

    private static let pongBytes = Array("PONG\r\n".utf8)
    private static let pingBytes = Array("PING\r\n".utf8)

    init(configuration: NATSConfiguration, loop: EventLoop) {
        self.configuration = configuration
        self.loop = loop
        parser = OperationParser(limits: configuration.parserLimits)
        pool = ServerPool(servers: configuration.servers, initialWait: configuration.reconnectWaitMilliseconds,
                          maximumWait: configuration.maxReconnectWaitMilliseconds)
        inboxPrefix = "_INBOX." + InboxName.random() + "."
    }

    // MARK: Output (any thread)

    /// Appends commands to the pending output under the lock and schedules a drain.
    func enqueue<Result>(_ body: (inout Shared) throws(NATSClientError) -> Result) throws(NATSClientError) -> Result {
        let (result, mustSchedule) = try shared.withLock { (state) throws(NATSClientError) -> (Result, Bool) in
            guard !state.isClosed else { throw .closed }
            guard state.output.count < configuration.pendingLimitBytes else { throw .outputBufferFull }
            let result = try body(&state)
            let mustSchedule = state.isWritable && !state.isDrainScheduled && !state.output.isEmpty
            if mustSchedule { state.isDrainScheduled = true }
            return (result, mustSchedule)
        }
        if mustSchedule { loop.execute { [self] in drainOutput() } }
        return result
    }

    /// Moves the pending output into the socket. Runs on the loop.
    private func drainOutput() {
        guard let socket, phase == .connected, !isSocketBackpressured else {
            shared.withLock { $0.isDrainScheduled = false }
            return
        }
        let bytes = shared.withLock { state -> [UInt8] in
            state.isDrainScheduled = false
            var bytes: [UInt8] = []
            swap(&bytes, &state.output)
            return bytes
        }
        guard !bytes.isEmpty else { return }
        if socket.send(bytes) == .backpressure { isSocketBackpressured = true }
    }

    // MARK: Lifecycle (loop)

    /// Starts connecting, unless already started. Runs on the loop.
    func start() {
        guard phase == .idle else { return }
        attemptConnect(afterFailure: false)
    }

    private func attemptConnect(afterFailure: Bool) {
        if afterFailure { pool.recordFailure() }
        if !hasConnectedOnce, pool.hasFailedEveryServer {
            // The first connect reports failure once every server was tried; reconnecting later
            // goes on for as long as the connection is open.
            let waiters = shared.withLock { state in
                defer { state.connectWaiters.removeAll() }
                return state.connectWaiters
            }
            for waiter in waiters { waiter.resume(returning: .failure(.noServerAvailable(lastFailure: lastFailure))) }
        }
        let (server, wait) = pool.nextAttempt(using: &random)
        generation += 1
        let attempt = generation
        phase = .waitingToReconnect
        if wait == 0 {
            open(server)
            return
        }
        loop.schedule(afterMilliseconds: wait) { [self] in
            guard generation == attempt, phase == .waitingToReconnect else { return }
            open(server)
        }
    }

    private func open(_ server: NATSServerAddress) {
        phase = .connecting
        parser = OperationParser(limits: configuration.parserLimits)
        isParserPoisoned = false
        pingsOutstanding = 0
        isSocketBackpressured = false
        var options = ConnectionOptions()
        options.highWaterMark = configuration.socketHighWaterBytes
        options.lowWaterMark = configuration.socketHighWaterBytes / 4
        // Never let the transport drop us for queued output: the pending buffer is the bound.
        options.outputLimit = max(configuration.pendingLimitBytes, configuration.socketHighWaterBytes) * 2
        do {
            let connection = try SocketClient.connect(host: server.host, port: server.port, loop: loop,
                                                      options: options, handler: self)
            connection.deadline = loop.now + configuration.connectTimeoutMilliseconds
            socket = connection
            shared.withLock { $0.connectedServer = server }
        } catch {
            lastFailure = "\(server): \(error)"
            attemptConnect(afterFailure: true)
        }
    }

    /// Closes for good. Runs on the loop.
    func shutDown() {
        guard phase != .closed else {
            // Closed before: once the socket is gone nothing else will answer a later `close()`.
            if socket == nil { finishClose() }
            return
        }
        let wasConnected = phase == .connected
        phase = .closed
        generation += 1
        if wasConnected { drainOutput() }
        let (waiters, entries) = shared.withLock { state in
            state.isClosed = true
            state.isWritable = false
            defer {
                state.connectWaiters.removeAll()
                state.inboxEntries.removeAll()
            }
            return (state.connectWaiters, state.inboxEntries)
        }
        for waiter in waiters { waiter.resume(returning: .failure(.closed)) }
        for entry in entries.values { entry.resolve(.failure(.closed)) }
        failPongWaiters(with: .closed)
        if let socket {
            socket.close(flushFirst: true)
        } else {
            finishClose()
        }
    }

    private func finishClose() {
        let waiters = shared.withLock { state in
            defer { state.closeWaiters.removeAll() }
            return state.closeWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func failCallbackRequests(with error: NATSClientError) {
        let entries = shared.withLock { state -> [InboxEntry] in
            var failed: [InboxEntry] = []
            state.inboxEntries = state.inboxEntries.filter { _, entry in
                guard case .callback = entry else { return true }
                failed.append(entry)
                return false
            }
            return failed
        }
        for entry in entries { entry.resolve(.failure(error)) }
    }

    private func failPongWaiters(with error: NATSClientError) {
        for expectation in pongExpectations {
            if case .flush(let waiter) = expectation { waiter.resume(.failure(error)) }
        }
        pongExpectations.removeAll()
        if error == .closed {
            for waiter in deferredFlushes { waiter.resume(.failure(error)) }
            deferredFlushes.removeAll()
        }
    }

    // MARK: ConnectionHandler (loop)

    func connectionDidOpen(_ connection: Connection) {
        guard connection === socket else { return }
        phase = .awaitingInfo
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard connection === socket, !isParserPoisoned else { return }
        do {
            try parser.parse(bytes) { operation in handle(operation, on: connection) }
        } catch {
            lastFailure = "protocol violation: \(error)"
            isParserPoisoned = true
            connection.close(flushFirst: false)
        }
        if let limits = pendingParserLimits {
            parser.limits = limits
            pendingParserLimits = nil
        }
        deliverBatches()
    }

    func connectionDidDrain(_ connection: Connection) {
        guard connection === socket else { return }
        isSocketBackpressured = false
        drainOutput()
    }

    func connectionDeadlineReached(_ connection: Connection) {
        guard connection === socket, phase != .connected else { return }
        lastFailure = "handshake with \(shared.withLock { $0.connectedServer }.map { "\($0)" } ?? "?") timed out"
        connection.close(flushFirst: false)
    }

    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        guard connection === socket else { return }
        socket = nil
        let wasConnected = phase == .connected
        shared.withLock { state in
            state.isWritable = false
            state.connectedServer = nil
        }
        failPongWaiters(with: phase == .closed ? .closed : .connectionLost)
        if phase == .closed {
            finishClose()
            return
        }
        failCallbackRequests(with: .connectionLost)
        if case .connectFailed = reason {
            lastFailure = "\(reason)"
        } else if !wasConnected, lastFailure == "none" {
            lastFailure = "\(reason)"
        }
        attemptConnect(afterFailure: !wasConnected)
    }

    // MARK: Operations (loop, inside the parser's callback)

    private func handle(_ operation: ServerOperation, on connection: Connection) {
        switch operation {
        case .message(let view):
            route(view)
        case .ping:
            connection.send(Self.pongBytes)
        case .pong:
            handlePong()
        case .info(let json):
            guard let info = ServerInfo.decode(json) else {
                lastFailure = "INFO that is not a JSON object"
                connection.close(flushFirst: false)
                return
            }
            handleInfo(info, on: connection)
        case .ok:
            break
        case .error(let text):
            lastFailure = "server error: \(String(decoding: text, as: UTF8.self))"
        }
    }

    private func handleInfo(_ info: ServerInfo, on connection: Connection) {
        if configuration.usesAnnouncedServers { pool.add(urls: info.connectURLs) }
        var limits = configuration.parserLimits
        limits.maxPayloadBytes = min(limits.maxPayloadBytes, info.maxPayload + 64 * 1024)
        pendingParserLimits = limits
        shared.withLock { state in
            state.serverInfo = info
            state.maxPayload = info.maxPayload
        }
        guard phase == .awaitingInfo else { return }
        var handshake: [UInt8] = []
        CommandEncoder.connect(configuration.connect, into: &handshake)
        // Subjects were validated when the subscriptions were made.
        try? CommandEncoder.subscribe(subject: inboxPrefix + "*", subscriptionID: inboxSubscriptionID, into: &handshake)
        let subscriptions = shared.withLock { Array($0.subscriptions.values) }
        for subscription in subscriptions.sorted(by: { $0.id < $1.id }) {
            try? CommandEncoder.subscribe(subject: subscription.subject, queueGroup: subscription.queueGroup,
                                          subscriptionID: subscription.id, into: &handshake)
        }
        CommandEncoder.ping(into: &handshake)
        pongExpectations.append(.handshake)
        phase = .handshaking
        connection.send(handshake)
    }

    private func handlePong() {
        guard !pongExpectations.isEmpty else { return }
        switch pongExpectations.removeFirst() {
        case .handshake:
            didCompleteHandshake()
        case .keepalive:
            pingsOutstanding = 0
        case .flush(let waiter):
            pingsOutstanding = 0
            waiter.resume(.success(()))
        }
    }

    private func didCompleteHandshake() {
        guard let socket else { return }
        phase = .connected
        socket.deadline = nil
        pool.recordSuccess()
        lastFailure = "none"
        let isReconnect = hasConnectedOnce
        hasConnectedOnce = true
        let waiters = shared.withLock { state in
            state.isWritable = true
            if isReconnect { state.reconnectCount += 1 }
            defer { state.connectWaiters.removeAll() }
            return state.connectWaiters
        }
        drainOutput()
        for waiter in deferredFlushes {
            socket.send(Self.pingBytes)
            pongExpectations.append(.flush(waiter))
        }
        deferredFlushes.removeAll()
        for waiter in waiters { waiter.resume(returning: .success(())) }
        scheduleKeepalive(for: generation)
    }

    private func scheduleKeepalive(for socketGeneration: Int) {
        loop.schedule(afterMilliseconds: configuration.pingIntervalMilliseconds) { [self] in
            guard generation == socketGeneration, phase == .connected, let socket else { return }
            if pingsOutstanding >= configuration.maxPingsOutstanding {
                lastFailure = "stale connection: \(pingsOutstanding) PINGs unanswered"
                socket.close(flushFirst: false)
                return
            }
            pingsOutstanding += 1
            pongExpectations.append(.keepalive)
            socket.send(Self.pingBytes)
            scheduleKeepalive(for: socketGeneration)
        }
    }

    // MARK: Flush (loop)

    /// Sends a PING after everything queued so far and resumes `waiter` with its PONG.
    func flush(_ waiter: ResumeOnce<Result<Void, NATSClientError>>) {
        if phase == .closed {
            waiter.resume(.failure(.closed))
            return
        }
        guard phase == .connected, let socket else {
            deferredFlushes.append(waiter)
            return
        }
        drainOutput()
        socket.send(Self.pingBytes)
        pongExpectations.append(.flush(waiter))
    }
}
