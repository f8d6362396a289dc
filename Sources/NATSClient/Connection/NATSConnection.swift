// A NATS client connection with an async/await API: publish, subscribe, request/reply, flush,
// and reconnection to another server of the cluster. How it works is in ConnectionCore.swift.
import Dispatch
import NATSProtocol
import SocketServer
import Synchronization

/// A connection to a NATS cluster. Every method is safe from any thread.
public final class NATSConnection: Sendable {
    let core: ConnectionCore

    /// The loop that owns the socket. A server passes one of its own loops, so the connection
    /// shares its threads; the default is a loop of its own.
    public var loop: EventLoop { core.loop }

    public init(configuration: NATSConfiguration, loop: EventLoop = EventLoop(index: 0)) {
        core = ConnectionCore(configuration: configuration, loop: loop)
    }

    // MARK: Connecting

    /// Connects, trying each server in turn; returns once a server completed the handshake, or
    /// throws `.noServerAvailable` once every server failed. Once connected, a lost connection
    /// is replaced in the background for as long as the connection is not closed.
    public func connect() async throws(NATSClientError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, NATSClientError>, Never>) in
            let state = core.shared.withLock { state -> (closed: Bool, writable: Bool) in
                if !state.isClosed && !state.isWritable { state.connectWaiters.append(continuation) }
                return (state.isClosed, state.isWritable)
            }
            if state.closed {
                continuation.resume(returning: .failure(.closed))
            } else if state.writable {
                continuation.resume(returning: .success(()))
            } else {
                loop.execute { [core] in core.start() }
            }
        }
        try result.get()
    }

    /// Flushes what is queued, closes the socket and stops reconnecting. Waiting requests fail
    /// with `.closed`.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            core.shared.withLock { $0.closeWaiters.append(continuation) }
            loop.execute { [core] in core.shutDown() }
        }
    }

    /// True while a server has completed the handshake and the socket is up.
    public var isConnected: Bool { core.shared.withLock { $0.isWritable } }

    /// The server the socket is connected (or connecting) to.
    public var connectedServer: NATSServerAddress? { core.shared.withLock { $0.connectedServer } }

    /// The INFO of the last server connected to.
    public var serverInfo: ServerInfo? { core.shared.withLock { $0.serverInfo } }

    /// How many times a lost connection has been replaced.
    public var reconnectCount: Int { core.shared.withLock { $0.reconnectCount } }

    // MARK: Publishing

    /// Queues a message. It leaves with the next write; `flush()` waits until the server has
    /// seen it. Throws for a subject or header that cannot be sent, a payload past the server's
    /// `max_payload`, a full output buffer, or a closed connection.
    public func publish(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil,
                        replyTo: String? = nil) throws(NATSClientError) {
        try core.enqueue { (state) throws(NATSClientError) in
            try Self.encodePublish(subject, payload: payload, headers: headers, replyTo: replyTo, into: &state)
        }
    }

    private static func encodePublish(_ subject: String, payload: [UInt8], headers: NATSHeaders?, replyTo: String?,
                                      into state: inout ConnectionCore.Shared) throws(NATSClientError) {
        guard payload.count <= state.maxPayload else {
            throw .invalidCommand(.payloadTooLarge(size: payload.count, limit: state.maxPayload))
        }
        do {
            if let headers {
                try CommandEncoder.publish(subject: subject, replyTo: replyTo, headers: headers, payload: payload,
                                           into: &state.output)
            } else {
                try CommandEncoder.publish(subject: subject, replyTo: replyTo, payload: payload, into: &state.output)
            }
        } catch {
            throw .invalidCommand(error)
        }
    }

    /// Waits until the server has processed everything queued before this call (a PING/PONG
    /// round trip).
    public func flush(timeoutMilliseconds: Int? = nil) async throws(NATSClientError) {
        let timeout = timeoutMilliseconds ?? core.configuration.requestTimeoutMilliseconds
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, NATSClientError>, Never>) in
            let once = ResumeOnce(continuation)
            loop.execute { [core] in core.flush(once) }
            loop.schedule(afterMilliseconds: timeout) { once.resume(.failure(.timeout)) }
        }
        try result.get()
    }

    // MARK: Subscribing

    /// Subscribes to `subject` (wildcards allowed). Messages go to `handler`: on `queue` when
    /// given, the messages of one read delivered together in one block; otherwise on the
    /// connection's loop as they are parsed (the handler must then be quick and not block).
    public func subscribe(to subject: String, queueGroup: String? = nil, deliveringOn queue: DispatchQueue? = nil,
                          handler: @escaping @Sendable (NATSMessage) -> Void) throws(NATSClientError) -> NATSSubscription {
        guard Subject.isValidForSubscribe(subject) else { throw .invalidCommand(.invalidSubject(subject)) }
        if let queueGroup, !Subject.isValidQueueGroup(queueGroup) { throw .invalidCommand(.invalidQueueGroup(queueGroup)) }
        let id = try core.enqueue { (state) throws(NATSClientError) -> UInt64 in
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            state.subscriptions[id] = Subscription(id: id, subject: subject, queueGroup: queueGroup, queue: queue, handler: handler)
            try? CommandEncoder.subscribe(subject: subject, queueGroup: queueGroup, subscriptionID: id, into: &state.output)
            return id
        }
        return NATSSubscription(id: id, subject: subject, connection: self)
    }

    /// Subscribes and delivers as an asynchronous sequence; ending the iteration (or dropping
    /// the stream) unsubscribes.
    public func messages(on subject: String, queueGroup: String? = nil) throws(NATSClientError) -> AsyncStream<NATSMessage> {
        let (stream, continuation) = AsyncStream<NATSMessage>.makeStream()
        let subscription = try subscribe(to: subject, queueGroup: queueGroup) { continuation.yield($0) }
        continuation.onTermination = { _ in subscription.unsubscribe() }
        return stream
    }

    func unsubscribe(_ id: UInt64) {
        _ = try? core.enqueue { (state) throws(NATSClientError) in
            guard let subscription = state.subscriptions.removeValue(forKey: id) else { return }
            subscription.isCancelled.store(true, ordering: .relaxed)
            CommandEncoder.unsubscribe(subscriptionID: id, into: &state.output)
        }
    }

    // MARK: Request/reply

    /// Publishes with a reply subject of this connection's inbox and waits for the first reply.
    /// Throws `.noResponders` at once when nobody subscribes to `subject`, `.timeout` when no
    /// reply comes within `timeoutMilliseconds` (default: the configuration's).
    public func request(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil,
                        timeoutMilliseconds: Int? = nil) async throws(NATSClientError) -> NATSMessage {
        let pending = try startRequest(subject, payload: payload, headers: headers, timeoutMilliseconds: timeoutMilliseconds)
        return try await pending.reply()
    }

    /// Queues a request now, in call order with everything else this connection sends, and
    /// returns a handle to wait for its reply later: many requests in flight from one task, in
    /// a known order (a pipeline of JetStream appends).
    public func startRequest(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil,
                             timeoutMilliseconds: Int? = nil) throws(NATSClientError) -> PendingReply {
        let reply = PendingReply(subject: subject, core: core)
        reply.token = try queueRequest(subject, payload: payload, headers: headers,
                                       timeoutMilliseconds: timeoutMilliseconds, entry: .reply(reply))
        return reply
    }

    /// Queues a request now, like `startRequest`, and hands its outcome to `onReply` on the
    /// connection's loop: the reply, or `.noResponders(subject:)`, `.timeout`, `.closed`, or
    /// `.connectionLost` as soon as the socket is lost (it may have reached the server, and its
    /// reply will not be heard). No task waits: for a caller whose own state lives on the loop (a
    /// journal's append pipeline), so an answer costs no thread hop. `onReply` runs once, must be
    /// quick and must not block.
    public func startRequest(_ subject: String, payload: [UInt8], headers: NATSHeaders? = nil,
                             timeoutMilliseconds: Int? = nil,
                             onReply: @escaping @Sendable (Result<NATSMessage, NATSClientError>) -> Void) throws(NATSClientError) {
        _ = try queueRequest(subject, payload: payload, headers: headers, timeoutMilliseconds: timeoutMilliseconds,
                             entry: .callback(subject: subject, onReply))
    }

    private func queueRequest(_ subject: String, payload: [UInt8], headers: NATSHeaders?, timeoutMilliseconds: Int?,
                              entry: ConnectionCore.InboxEntry) throws(NATSClientError) -> UInt64 {
        let deadline = core.loop.now + Int64(timeoutMilliseconds ?? core.configuration.requestTimeoutMilliseconds)
        let core = self.core
        let (token, timerDeadline) = try core.enqueue { (state) throws(NATSClientError) -> (UInt64, Int64?) in
            state.nextInboxToken += 1
            let token = state.nextInboxToken
            try Self.encodePublish(subject, payload: payload, headers: headers,
                                   replyTo: core.inboxPrefix + String(token), into: &state)
            state.inboxEntries[token] = entry
            return (token, state.requestDeadlines.add(token: token, deadline: deadline))
        }
        if let timerDeadline { core.armRequestTimer(for: timerDeadline) }
        return token
    }
}

/// A request on its way: its reply, a timeout or a failure resolves it once.
public final class PendingReply: @unchecked Sendable {
    // Confinement: `token` is written once, before the handle is returned, and only read after;
    // `state` is guarded by its mutex.
    private enum State {
        case waiting(CheckedContinuation<Result<NATSMessage, NATSClientError>, Never>?)
        case done(Result<NATSMessage, NATSClientError>)
    }

    private let state = Mutex(State.waiting(nil))
    fileprivate(set) var token: UInt64 = 0
    private let subject: String
    private let core: ConnectionCore

    fileprivate init(subject: String, core: ConnectionCore) {
        self.subject = subject
        self.core = core
    }

    /// Waits for the reply. Cancelling the waiting task fails the request with `.cancelled`.
    public func reply() async throws(NATSClientError) -> NATSMessage {
        let core = self.core
        let token = self.token
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<NATSMessage, NATSClientError>, Never>) in
                let ready = state.withLock { state -> Result<NATSMessage, NATSClientError>? in
                    if case .done(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            core.resolveReply(token, with: .cancelled)
        }
        switch result {
        case .success(let message): return message
        case .failure(.noResponders): throw .noResponders(subject: subject)
        case .failure(let error): throw error
        }
    }

    /// The first resolution wins; later ones are ignored.
    func resolve(_ result: Result<NATSMessage, NATSClientError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<NATSMessage, NATSClientError>, Never>?? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .done(result)
            return .some(continuation)
        }
        if case .some(.some(let continuation)) = continuation { continuation.resume(returning: result) }
    }
}

extension ConnectionCore {
    /// Arms the loop's one request timer (RequestDeadlines.swift) for `deadline`; when it fires,
    /// every request past its deadline fails with `.timeout`.
    func armRequestTimer(for deadline: Int64) {
        loop.schedule(afterMilliseconds: Int(max(1, deadline - loop.now))) { [self] in
            let (expired, rearm) = shared.withLock { state -> ([InboxEntry], Int64?) in
                let (tokens, rearm) = state.requestDeadlines.expire(firedFor: deadline, now: loop.now)
                return (tokens.compactMap { state.inboxEntries.removeValue(forKey: $0) }, rearm)
            }
            for entry in expired { entry.resolve(.failure(.timeout)) }
            if let rearm { armRequestTimer(for: rearm) }
        }
    }

    /// Fails a waiting request with `error` if it is still waiting.
    func resolveReply(_ token: UInt64, with error: NATSClientError) {
        shared.withLock { $0.inboxEntries.removeValue(forKey: token) }?.resolve(.failure(error))
    }
}

/// A continuation that two parties (the answer and a timeout) race to resume; the first wins.
final class ResumeOnce<Value: Sendable>: Sendable {
    private let state: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        state = Mutex(continuation)
    }

    func resume(_ value: Value) {
        let continuation = state.withLock { state in
            defer { state = nil }
            return state
        }
        continuation?.resume(returning: value)
    }
}
