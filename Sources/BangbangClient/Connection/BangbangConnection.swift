// BangbangConnection: the app's one connection to the server, kept up for it.
//
// Theory of operation
// -------------------
// The connection is an actor; everything below runs on it. `connect()` starts a supervisor task
// that loops: open a WebSocket (the transport), establish it, serve it until it ends, wait,
// repeat — until `disconnect()`.
//
//   connecting ──open──▶ establishing ──▶ online ──drop / ping unanswered / server close──┐
//       ▲                    │ (resume refused: logged out, still online)                 │
//       └──── waiting (ReconnectBackoff: exponential, jittered; reset once online) ◀──────┘
//
// Establishing a new WebSocket, before any request of the app goes out:
// 1. With a stored session, `auth.resume {token, last_seq}` where last_seq is the last personal
//    event handed to the app. The server replays what came after it *before* its reply; those
//    events pass through the same gate as live ones (PersonalStreamPosition: in order, once;
//    a gap makes the connection drop and resume again, which refills it). The reply's `seq` must
//    be where the replay ended; if it is not, or the reply says `resync`, the app is told
//    `.resyncNeeded` and the position jumps to the reply's. A refused token ends the session
//    (`.loggedOut`) and the connection stays online for a new login.
// 2. The built-in administrator (`LogInAsAdministrator`) logs in again with its secret.
// 3. A board subscription is renewed; its new list reaches `boardFeed()` as `.subscribed`.
// Then the connection is online and requests waiting for it go out.
//
// Requests: `send` waits (bounded by `requestTimeout`) until the connection is online, sends,
// and waits (bounded again) for the reply with its id; replies come in any order. A connection
// that drops fails what it had sent with `.connectionLost` (the request may have taken effect).
// A request is never sent twice: only the app knows whether repeating it is safe.
//
// Liveness: a ping every `pingInterval`; if nothing at all arrived since the previous ping, the
// WebSocket is dropped and remade. Time is the injected clock and jitter the injected random
// generator, so all of this runs under a test's mock clock.
//
// The personal stream's position is saved per user in the session store as the app processes
// events (see ConnectionUpdates), so a restart resumes with no gap and no duplicate.
import JSON

public actor BangbangConnection {
    public nonisolated let configuration: ConnectionConfiguration
    /// Personal events, resyncs, logouts and state changes, for one loop in the app.
    public nonisolated let updates: ConnectionUpdates

    private let transport: any WebSocketTransport
    let store: any SessionStore
    private let clock: any Clock<Duration>
    private var random: any RandomNumberGenerator & Sendable
    let updateSink: AsyncStream<Delivery>.Continuation

    // The WebSocket.
    public private(set) var state = ConnectionState.stopped
    private var supervisor: Task<Void, Never>?
    private var channel: (any TransportChannel)?
    /// Counts WebSockets, so late news from an old one is recognized and ignored.
    var generation = 0
    var isOnline = false
    private var channelEnded: CheckedContinuation<Void, Never>?
    private var lastFailure = "not connected yet"
    private var heardSinceLastPing = true

    // Requests.
    private var nextRequestID: Int64 = 1
    private var pending: [Int64: PendingRequest] = [:]
    private var nextWaiterID = 0
    private var onlineWaiters: [Int: CheckedContinuation<Result<Int, BangbangError>, Never>] = [:]

    // The session and the personal stream.
    enum Authentication: Sendable {
        case none
        case user(StoredSession)
        case administrator(secret: String)
    }

    var authentication: Authentication
    var position: PersonalStreamPosition
    /// The logged-in user, as the last login or resume returned it.
    public internal(set) var user: User?
    var loginsInFlight = 0
    /// A logout of ours is on its way: the `account.logged_out` it causes is no news.
    var logoutsInFlight = 0
    /// Personal events that arrived while a login was in flight, before its reply.
    var heldEvents: [PersonalEvent] = []

    // The board feed.
    struct Subscription: Sendable {
        var filter: BoardFilter
        var limit: Int?
    }

    enum FeedState: Sendable {
        case idle
        case subscribing(buffer: [BoardFeedEvent])
        case live(positions: [OrderType: Int64])
    }

    var subscription: Subscription?
    var feed = FeedState.idle
    var feedSinks: [Int: AsyncStream<BoardFeedUpdate>.Continuation] = [:]
    private var nextFeedID = 0

    private struct PendingRequest {
        var continuation: CheckedContinuation<Result<JSONValue, BangbangError>, Never>
        var generation: Int
        var timeout: Task<Void, Never>
    }

    /// - Parameters:
    ///   - store: where the session and the stream position are kept: by default a file in
    ///     Application Support (`FileSessionStore.standard`); an app may keep them in its
    ///     keychain instead. A session found there is resumed by `connect()`.
    ///   - transport: the WebSocket implementation; the default suits the platform.
    ///   - clock, random: time and jitter; tests pass a mock clock and a seeded generator.
    public init(configuration: ConnectionConfiguration, store: any SessionStore = FileSessionStore.standard,
                transport: any WebSocketTransport = BangbangConnection.platformTransport(),
                clock: any Clock<Duration> = ContinuousClock(),
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.configuration = configuration
        self.store = store
        self.transport = transport
        self.clock = clock
        self.random = random
        let (stream, sink) = AsyncStream<Delivery>.makeStream(bufferingPolicy: .unbounded)
        updateSink = sink
        let relay = AcknowledgementRelay()
        updates = ConnectionUpdates(stream: stream, relay: relay)
        if let session = try? store.load() {
            authentication = .user(session)
            position = PersonalStreamPosition(delivered: session.lastSeq)
        } else {
            authentication = .none
            position = PersonalStreamPosition(delivered: 0)
        }
        relay.connection = self
    }

    deinit {
        updateSink.finish()
        for sink in feedSinks.values { sink.finish() }
    }

    /// `SocketTransport` on Linux, `URLSessionTransport` on Apple platforms.
    public static func platformTransport() -> any WebSocketTransport {
        #if os(Linux)
        SocketTransport()
        #else
        URLSessionTransport()
        #endif
    }

    /// Whether a user's session is held (stored, and resumed on every new WebSocket).
    public var isLoggedIn: Bool {
        if case .user = authentication { return true }
        return false
    }

    // MARK: Starting and stopping

    /// Starts keeping the connection up (if it is not already) and waits until it is online:
    /// connected, and the stored session resumed or found invalid. Returns the logged-in user,
    /// nil when there is none (log in with `LogInWithCode`). Throws `.unreachable` when that
    /// takes longer than the request timeout; the connection keeps trying meanwhile.
    @discardableResult
    public func connect() async throws(BangbangError) -> User? {
        if supervisor == nil {
            supervisor = Task { await self.superviseConnections() }
        }
        _ = try await waitUntilOnline()
        return user
    }

    /// Closes the WebSocket and stops reconnecting. Requests waiting fail with `.cancelled`. The
    /// session stays stored; `connect()` resumes it.
    public func disconnect() async {
        guard let supervisor else { return }
        self.supervisor = nil
        supervisor.cancel()
        isOnline = false
        channel?.close()
        for waiter in onlineWaiters.values { waiter.resume(returning: .failure(.cancelled)) }
        onlineWaiters.removeAll()
        failPending(with: .cancelled) { _ in true }
        await supervisor.value
        setState(.stopped)
    }

    // MARK: Requests

    /// Sends `request` once the connection is online and returns its reply.
    public func send<Request: BangbangRequest>(_ request: Request) async throws(BangbangError) -> Request.Reply {
        let generation = try await waitUntilOnline()
        let effect = request.effect.kind
        let feedBefore = feed
        switch effect {
        case .logIn: loginsInFlight += 1
        case .logOut: logoutsInFlight += 1
        case .subscribe: feed = .subscribing(buffer: [])
        default: break
        }
        let result = await exchange(request.operation, request.data, generation: generation)
        switch effect {
        case .logIn:
            loginsInFlight -= 1
            if loginsInFlight == 0, case .failure = result { heldEvents.removeAll() }
        case .logOut:
            logoutsInFlight -= 1
        default:
            break
        }
        let data: JSONValue
        switch result {
        case .success(let value):
            data = value
        case .failure(let error):
            // A refused subscription changes nothing: the feed goes on as before.
            if case .subscribe = effect, case .subscribing = feed { feed = feedBefore }
            if error.code == .unauthenticated, case .user = authentication { endSession(.revoked) }
            throw error
        }
        do throws(DecodingFailure) {
            try apply(effect, reply: data)
            return try request.decodeReply(data)
        } catch {
            throw .invalidReply(error)
        }
    }

    /// A new stream of the board feed (each call makes another; several may listen). See `Board`
    /// for a list kept in step with it.
    public func boardFeed() -> AsyncStream<BoardFeedUpdate> {
        let (stream, sink) = AsyncStream<BoardFeedUpdate>.makeStream(bufferingPolicy: .unbounded)
        let id = nextFeedID
        nextFeedID += 1
        feedSinks[id] = sink
        sink.onTermination = { [weak self] _ in
            Task { await self?.removeFeed(id) }
        }
        return stream
    }

    /// Subscribes to `filter` and returns a `Board` holding its open orders, kept in step with
    /// the feed and renewed after every reconnect.
    public func watchBoard(_ filter: BoardFilter, limit: Int? = nil) async throws(BangbangError) -> Board {
        let board = Board(filter: filter, connection: self)
        await board.start(listening: boardFeed())
        _ = try await send(SubscribeBoard(filter, limit: limit))
        return board
    }

    // MARK: Supervision

    private func superviseConnections() async {
        var failures = 0
        while !Task.isCancelled {
            setState(.connecting(attempt: failures + 1))
            if await connectOnce() { failures = 0 }
            if Task.isCancelled { break }
            let delay = configuration.backoff.delay(afterFailures: failures, using: &random)
            failures += 1
            setState(.waiting(delay: delay, reason: lastFailure))
            do { try await clock.sleep(for: delay) } catch { break }
        }
    }

    /// One WebSocket from open to end; returns whether it got online.
    private func connectOnce() async -> Bool {
        let opened: any TransportChannel
        do {
            opened = try await transport.connect(to: configuration.endpoint)
        } catch {
            lastFailure = error.description
            return false
        }
        guard !Task.isCancelled else {
            opened.close()
            return false
        }
        generation += 1
        let current = generation
        channel = opened
        heardSinceLastPing = true
        Task { [weak self] in
            for await event in opened.events { await self?.receive(event, generation: current) }
            await self?.channelDidEnd(generation: current)
        }
        let pinger = Task { [weak self] in await self?.keepAlive(generation: current) }
        defer { pinger.cancel() }
        let isEstablished = await establish(generation: current)
        if isEstablished {
            isOnline = true
            setState(.online)
            for waiter in onlineWaiters.values { waiter.resume(returning: .success(current)) }
            onlineWaiters.removeAll()
        }
        if channel != nil, current == generation {
            await withCheckedContinuation { channelEnded = $0 }
        }
        return isEstablished
    }

    private func establish(generation: Int) async -> Bool {
        switch authentication {
        case .none:
            break
        case .user(let session):
            let result = await exchange("auth.resume", ["token": .string(session.token), "last_seq": .integer(position.delivered)],
                                        generation: generation)
            switch result {
            case .success(let data):
                guard let reply = try? ResumeResult(wire: data, at: []) else {
                    return drop(generation, because: "the server's auth.resume reply is unreadable")
                }
                user = reply.user
                if position.settle(resumedAt: reply.seq, resync: reply.resync) {
                    updateSink.yield(Delivery(update: .resyncNeeded,
                                              acknowledgement: Acknowledgement(token: session.token, seq: reply.seq)))
                }
            case .failure(.server(let error)) where error.code == .sessionExpired:
                endSession(.expired)
            case .failure(.server(let error)) where error.code == .sessionRevoked:
                endSession(.revoked)
            case .failure(.server(let error)) where error.code == .unauthenticated:
                endSession(.rejected)
            case .failure(let error):
                return drop(generation, because: "auth.resume: \(error)")
            }
        case .administrator(let secret):
            switch await exchange("auth.admin_secret", ["secret": .string(secret)], generation: generation) {
            case .success: break
            // A new server run writes a new secret: the old one is no good any more.
            case .failure(.server(let error)) where error.code == .unauthenticated || error.code == .forbidden:
                endSession(.rejected)
            case .failure(let error): return drop(generation, because: "auth.admin_secret: \(error)")
            }
        }
        if let subscription {
            feed = .subscribing(buffer: [])
            let request = SubscribeBoard(subscription.filter, limit: subscription.limit)
            switch await exchange(request.operation, request.data, generation: generation) {
            case .success(let data):
                guard let snapshot = try? BoardSnapshot(wire: data, at: []) else {
                    return drop(generation, because: "the server's board.subscribe reply is unreadable")
                }
                startFeed(snapshot, filter: subscription.filter)
            case .failure(.server):
                self.subscription = nil
                feed = .idle
                emitFeed(.unsubscribed)
            case .failure(let error):
                return drop(generation, because: "board.subscribe: \(error)")
            }
        }
        return channel != nil && generation == self.generation
    }

    func drop(_ generation: Int, because reason: String) -> Bool {
        lastFailure = reason
        if generation == self.generation { channel?.abort() }
        return false
    }

    private func keepAlive(generation: Int) async {
        while !Task.isCancelled {
            do { try await clock.sleep(for: configuration.pingInterval) } catch { return }
            guard generation == self.generation, let channel else { return }
            if !heardSinceLastPing {
                lastFailure = "nothing heard from the server for \(configuration.pingInterval)"
                channel.abort()
                return
            }
            heardSinceLastPing = false
            channel.ping()
        }
    }

    private func channelDidEnd(generation: Int) {
        guard generation == self.generation else { return }
        channel = nil
        isOnline = false
        failPending(with: .connectionLost) { $0 == generation }
        if case .live = feed, subscription != nil { emitFeed(.interrupted) }
        if case .subscribing = feed, subscription != nil { emitFeed(.interrupted) }
        feed = .idle
        if let channelEnded {
            self.channelEnded = nil
            channelEnded.resume()
        }
    }

    private func setState(_ newState: ConnectionState) {
        guard newState != state else { return }
        state = newState
        updateSink.yield(Delivery(update: .stateChanged(newState), acknowledgement: nil))
    }

    // MARK: Exchanging messages

    private func waitUntilOnline() async throws(BangbangError) -> Int {
        if isOnline, channel != nil { return generation }
        guard supervisor != nil else { throw .unreachable("not connected: call connect() first") }
        let id = nextWaiterID
        nextWaiterID += 1
        let timeout = configuration.requestTimeout
        let timer = Task { [weak self, clock] in
            do { try await clock.sleep(for: timeout) } catch { return }
            await self?.expireWaiter(id)
        }
        let result = await withCheckedContinuation { onlineWaiters[id] = $0 }
        timer.cancel()
        return try result.get()
    }

    private func expireWaiter(_ id: Int) {
        onlineWaiters.removeValue(forKey: id)?.resume(returning: .failure(.unreachable(lastFailure)))
    }

    /// Sends one request on WebSocket `generation` and waits for its reply.
    func exchange(_ operation: String, _ data: JSONValue?, generation: Int) async -> Result<JSONValue, BangbangError> {
        guard generation == self.generation, let channel else { return .failure(.connectionLost) }
        let id = nextRequestID
        nextRequestID += 1
        var members: [String: JSONValue] = ["id": .integer(id), "op": .string(operation)]
        if let data { members["data"] = data }
        let bytes = JSONWriter.encode(.object(members))
        let timeout = configuration.requestTimeout
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let timer = Task { [weak self, clock] in
                    do { try await clock.sleep(for: timeout) } catch { return }
                    await self?.finish(id, with: .failure(.timedOut))
                }
                pending[id] = PendingRequest(continuation: continuation, generation: generation, timeout: timer)
                channel.send(text: bytes)
            }
        } onCancel: {
            Task { await self.finish(id, with: .failure(.cancelled)) }
        }
    }

    private func finish(_ id: Int64, with result: Result<JSONValue, BangbangError>) {
        guard let request = pending.removeValue(forKey: id) else { return }
        request.timeout.cancel()
        request.continuation.resume(returning: result)
    }

    private func failPending(with error: BangbangError, where matches: (Int) -> Bool) {
        for (id, request) in pending where matches(request.generation) {
            pending.removeValue(forKey: id)
            request.timeout.cancel()
            request.continuation.resume(returning: .failure(error))
        }
    }

    private func receive(_ event: TransportEvent, generation: Int) {
        guard generation == self.generation else { return }
        heardSinceLastPing = true
        switch event {
        case .text(let bytes):
            guard let message = try? ServerMessage(parsing: bytes) else { return }
            switch message {
            case .reply(let id?, let result): finish(id, with: result.mapError(BangbangError.server))
            case .reply(nil, _): break
            case .personal(let event): receivePersonal(event)
            case .board(let event): receiveBoard(event)
            }
        case .pong:
            break
        case .closed(let code, let reason):
            lastFailure = code.map { "the server closed the connection (\($0)\(reason.isEmpty ? "" : ": \(reason)"))" }
                ?? "the connection dropped (\(reason))"
        }
    }
}
