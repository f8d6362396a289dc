// Following a key's changes: an ordered push consumer that delivers to a subscription of its
// own, restarted from the last revision seen whenever it stalls.
//
// The consumer starts with the key's last entry (`last_per_subject`), then delivers every new
// one. It sends idle heartbeats; when neither a delivery nor a heartbeat has come for three
// heartbeat periods (its server died, or the client moved to another server and the consumer
// went with the old one), or when a consumer sequence is skipped, a new consumer is made from
// the stream sequence after the last entry delivered. A watcher therefore sees every entry
// once, in order, across NATS node failures, except entries the bucket no longer holds when
// their turn comes: with a history of 1, a value replaced before it was delivered is skipped,
// and the watcher sees its successor. The latest entry is always delivered.
// Flow-control requests (status 100 with a reply subject) are answered at once.
import JSON
import Dispatch
import NATSProtocol
import Synchronization

public final class KeyWatch: Sendable {
    /// The entries, in revision order.
    public let updates: AsyncStream<KeyValueEntry>
    private let continuation: AsyncStream<KeyValueEntry>.Continuation
    private let bucket: KeyValueBucket
    private let subject: String

    private struct State {
        var lastStreamSequence: UInt64 = 0
        var lastConsumerSequence: UInt64 = 0
        var lastActivity: Int64 = 0
        var lastHeard: ContinuousClock.Instant?
        var subscription: NATSSubscription?
        var consumerName: String?
        var generation = 0
        var isRestarting = false
        var isStopped = false
    }
    private let state = Mutex(State())

    /// Heartbeat period asked of the server. One second: a stalled watch is noticed in three.
    static let heartbeatMilliseconds = 1_000

    init(bucket: KeyValueBucket, subject: String) {
        self.bucket = bucket
        self.subject = subject
        (updates, continuation) = AsyncStream<KeyValueEntry>.makeStream()
        continuation.onTermination = { [weak self] _ in self?.stop() }
        Task { await self.restart() }
        scheduleStallCheck()
    }

    /// When the watch last heard from its consumer (an entry or a heartbeat, every second while
    /// it is healthy); nil before the first. What was not heard in between may have happened: a
    /// watcher that times something by the absence of entries stops its clock here.
    public var lastHeard: ContinuousClock.Instant? { state.withLock { $0.lastHeard } }

    /// Ends the watch and its stream.
    public func stop() {
        let (subscription, name) = state.withLock { state -> (NATSSubscription?, String?) in
            state.isStopped = true
            defer { state.subscription = nil; state.consumerName = nil }
            return (state.subscription, state.consumerName)
        }
        subscription?.unsubscribe()
        continuation.finish()
        if let name {
            let jetStream = bucket.jetStream
            let stream = bucket.streamName
            Task { _ = try? await jetStream.call("CONSUMER.DELETE.\(stream).\(name)") }
        }
    }

    private var connection: NATSConnection { bucket.jetStream.connection }

    /// Makes a new consumer from the sequence after the last one delivered.
    private func restart() async {
        let begin = state.withLock { state -> (generation: Int, start: UInt64, old: NATSSubscription?, oldName: String?)? in
            guard !state.isStopped, !state.isRestarting else { return nil }
            state.isRestarting = true
            state.generation += 1
            state.lastConsumerSequence = 0
            state.lastActivity = connection.loop.now
            defer { state.subscription = nil; state.consumerName = nil }
            return (state.generation, state.lastStreamSequence + 1, state.subscription, state.consumerName)
        }
        guard let begin else { return }
        begin.old?.unsubscribe()
        if let oldName = begin.oldName {
            _ = try? await bucket.jetStream.call("CONSUMER.DELETE.\(bucket.streamName).\(oldName)")
        }
        let generation = begin.generation
        // A subscription of its own: a push consumer delivers only where its deliver subject
        // has interest of its own, and the connection's wildcard inbox does not count for that.
        let inbox = "_INBOX." + InboxName.random()
        guard let subscription = try? connection.subscribe(to: inbox, handler: { [weak self] message in
            self?.receive(message, generation: generation)
        }) else {
            state.withLock { $0.isRestarting = false }
            return
        }
        var config: [String: JSONValue] = [
            "deliver_subject": .string(inbox),
            "filter_subject": .string(subject),
            "ack_policy": "none",
            "replay_policy": "instant",
            "flow_control": true,
            "idle_heartbeat": .integer(Int64(Self.heartbeatMilliseconds) * 1_000_000),
            "mem_storage": true,
            "num_replicas": 1,
        ]
        if begin.start <= 1 {
            config["deliver_policy"] = "last_per_subject"
        } else {
            config["deliver_policy"] = "by_start_sequence"
            config["opt_start_seq"] = .integer(Int64(begin.start))
        }
        let name = try? await bucket.jetStream.call("CONSUMER.CREATE." + bucket.streamName,
                                                    ["stream_name": .string(bucket.streamName), "config": .object(config)]).string("name")
        let isCurrent = state.withLock { state -> Bool in
            state.isRestarting = false
            guard !state.isStopped, state.generation == generation else { return false }
            state.subscription = subscription
            state.consumerName = name
            // A failed create is retried by the stall check.
            state.lastActivity = connection.loop.now
            return true
        }
        if !isCurrent { subscription.unsubscribe() }
    }

    /// Runs on the connection's loop.
    private func receive(_ message: NATSMessage, generation: Int) {
        if let status = message.status {
            guard status == 100 else { return }
            state.withLock { state in
                guard state.generation == generation else { return }
                state.lastActivity = connection.loop.now
                state.lastHeard = .now
            }
            if let reply = message.replyTo { try? connection.publish(reply, payload: []) }
            return
        }
        guard let metadata = AckMetadata(message.replyTo) else { return }
        enum Verdict { case deliver, skip, gap }
        let verdict = state.withLock { state -> Verdict in
            guard state.generation == generation, !state.isStopped else { return .skip }
            state.lastActivity = connection.loop.now
            state.lastHeard = .now
            if state.lastConsumerSequence != 0, metadata.consumerSequence != state.lastConsumerSequence + 1 { return .gap }
            state.lastConsumerSequence = metadata.consumerSequence
            guard metadata.streamSequence > state.lastStreamSequence else { return .skip }
            state.lastStreamSequence = metadata.streamSequence
            return .deliver
        }
        switch verdict {
        case .deliver:
            let key = String(message.subject.dropFirst(bucket.subjectPrefix.utf8.count))
            let stored = StoredMessage(subject: message.subject, sequence: metadata.streamSequence,
                                       headers: message.headers, payload: Array(message.payload))
            continuation.yield(KeyValueEntry(bucket: bucket.name, key: key, stored: stored))
        case .gap:
            Task { await restart() }
        case .skip:
            break
        }
    }

    private func scheduleStallCheck() {
        connection.loop.schedule(afterMilliseconds: Self.heartbeatMilliseconds) { [weak self] in
            guard let self else { return }
            let isStalled = state.withLock { state -> Bool? in
                guard !state.isStopped else { return nil }
                return !state.isRestarting && connection.loop.now - state.lastActivity > Int64(3 * Self.heartbeatMilliseconds)
            }
            guard let isStalled else { return }
            if isStalled { Task { await self.restart() } }
            scheduleStallCheck()
        }
    }
}
