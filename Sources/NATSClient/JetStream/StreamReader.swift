// Reading a stream in order from a sequence: how a partition's new owner replays its journal.
//
// The reader makes an ephemeral pull consumer that starts at the wanted sequence, acknowledges
// nothing (`ack_policy: none`: the reader, not the server, keeps the position) and lives in
// memory on one server. Each `next` asks it for a batch with `no_wait`, so the answer is the
// messages there are now followed by a 404/408 status, never a wait for new ones. Every message's
// reply subject (`$JS.ACK.…`) carries its stream sequence and how many are still pending after
// it; `isCaughtUp` is true once a batch ends with none pending.
//
// The consumer is a convenience, not state: if it vanishes (its server died, or it idled past
// `inactive_threshold`), the next `next` makes a new one from the sequence after the last one
// returned, and anything delivered twice is dropped by sequence. So the reader's sequence is the
// only truth, and a replay survives the loss of the NATS node it was reading through.
import JSON
import NATSProtocol
import Synchronization

public actor StreamReader {
    public let stream: String
    public let subject: String?
    private let jetStream: JetStream
    /// The next sequence to return.
    public private(set) var nextSequence: UInt64
    /// True once the last batch ended with nothing more pending.
    public private(set) var isCaughtUp = false
    private var consumerName: String?

    /// An idle reader's consumer is removed by the server after this. Thirty seconds: far longer
    /// than between two batches of a replay.
    private static let inactiveThresholdNanoseconds: Int64 = 30_000_000_000

    init(jetStream: JetStream, stream: String, startSequence: UInt64, subject: String?) {
        self.jetStream = jetStream
        self.stream = stream
        self.subject = subject
        nextSequence = max(1, startSequence)
    }

    /// Up to `maximum` messages from `nextSequence` on, in order; empty when there are none now.
    public func next(maximum: Int = 256) async throws(NATSClientError) -> [StoredMessage] {
        precondition(maximum > 0, "a batch holds at least one message")
        var attempt = 0
        while true {
            attempt += 1
            let name = try await consumer()
            let outcome = await fetch(from: name, maximum: maximum)
            switch outcome.end {
            case .status(let code) where code == 404 || code == 408:
                return accept(outcome.messages, pending: outcome.messages.isEmpty ? 0 : outcome.lastPending)
            case .complete:
                return accept(outcome.messages, pending: outcome.lastPending)
            case .status, .timeout, .failed:
                // The consumer is gone or broken: a new one from where we are.
                consumerName = nil
                if !outcome.messages.isEmpty { return accept(outcome.messages, pending: outcome.lastPending) }
                if attempt >= 5 {
                    if case .failed(let error) = outcome.end { throw error }
                    throw .timeout
                }
            }
        }
    }

    /// Deletes the consumer (it would otherwise go by itself after its inactivity threshold).
    public func close() async {
        guard let name = consumerName else { return }
        consumerName = nil
        _ = try? await jetStream.call("CONSUMER.DELETE.\(stream).\(name)")
    }

    private func accept(_ messages: [StoredMessage], pending: UInt64) -> [StoredMessage] {
        var accepted: [StoredMessage] = []
        accepted.reserveCapacity(messages.count)
        for message in messages where message.sequence >= nextSequence {
            accepted.append(message)
            nextSequence = message.sequence + 1
        }
        isCaughtUp = pending == 0
        return accepted
    }

    private func consumer() async throws(NATSClientError) -> String {
        if let consumerName { return consumerName }
        var config: [String: JSONValue] = [
            "deliver_policy": "by_start_sequence",
            "opt_start_seq": .integer(Int64(nextSequence)),
            "ack_policy": "none",
            "replay_policy": "instant",
            "inactive_threshold": .integer(Self.inactiveThresholdNanoseconds),
            "mem_storage": true,
            "num_replicas": 1,
        ]
        if let subject { config["filter_subject"] = .string(subject) }
        let answer = try await jetStream.call("CONSUMER.CREATE." + stream, ["stream_name": .string(stream), "config": .object(config)])
        guard let name = answer.string("name") else { throw .jetStream(.malformed("consumer without a name")) }
        consumerName = name
        return name
    }

    private enum End: Sendable {
        case complete
        case status(Int)
        case timeout
        case failed(NATSClientError)
    }

    private struct Outcome: Sendable {
        var messages: [StoredMessage] = []
        var lastPending: UInt64 = 0
        var end = End.complete
    }

    /// One pull request: messages arrive on a subject of their own until the batch is full, a
    /// status ends it, or the timeout passes.
    private func fetch(from consumer: String, maximum: Int) async -> Outcome {
        let connection = jetStream.connection
        let collected = Mutex(Outcome())
        let timeout = jetStream.timeoutMilliseconds
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let once = ResumeOnce(continuation)
            let subscriptionBox = Mutex<NATSSubscription?>(nil)
            let finish: @Sendable (End?) -> Void = { end in
                let outcome = collected.withLock { state -> Outcome in
                    if let end { state.end = end }
                    return state
                }
                subscriptionBox.withLock { $0 }?.unsubscribe()
                once.resume(outcome)
            }
            // A subscription of its own per pull: the server delivers a pull's messages only to
            // a reply subject with interest of its own (the connection's wildcard inbox does
            // not count), and a late status of one pull must not end the next.
            let inbox = "_INBOX." + InboxName.random()
            let handler: @Sendable (NATSMessage) -> Void = { message in
                if let status = message.status {
                    if status == 100 { return }
                    finish(.status(status))
                    return
                }
                guard let metadata = AckMetadata(message.replyTo) else { return }
                let isFull = collected.withLock { state -> Bool in
                    state.messages.append(StoredMessage(subject: message.subject, sequence: metadata.streamSequence,
                                                        headers: message.headers, payload: Array(message.payload)))
                    state.lastPending = metadata.pending
                    return state.messages.count >= maximum || metadata.pending == 0
                }
                if isFull { finish(nil) }
            }
            do throws(NATSClientError) {
                let subscription = try connection.subscribe(to: inbox, handler: handler)
                subscriptionBox.withLock { $0 = subscription }
            } catch {
                finish(.failed(error))
                return
            }
            let body = JSONBody.encode(["batch": .integer(Int64(maximum)), "no_wait": true])
            do throws(NATSClientError) {
                try connection.publish("\(jetStream.apiPrefix).CONSUMER.MSG.NEXT.\(stream).\(consumer)", payload: body, replyTo: inbox)
            } catch {
                finish(.failed(error))
                return
            }
            connection.loop.schedule(afterMilliseconds: timeout) { finish(.timeout) }
        }
    }
}

/// What a JetStream delivery's reply subject says about it:
/// `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`, or
/// the newer form with domain and account hash before the stream and a token after.
struct AckMetadata: Sendable {
    var streamSequence: UInt64
    var consumerSequence: UInt64
    var pending: UInt64

    init?(_ replyTo: String?) {
        guard let replyTo else { return nil }
        let tokens = replyTo.split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else { return nil }
        let base = tokens.count == 9 ? 2 : 4
        guard tokens.count == 9 || tokens.count >= 11,
              let stream = UInt64(tokens[base + 3]), let consumer = UInt64(tokens[base + 4]),
              let pending = UInt64(tokens[base + 6]) else { return nil }
        streamSequence = stream
        consumerSequence = consumer
        self.pending = pending
    }
}
