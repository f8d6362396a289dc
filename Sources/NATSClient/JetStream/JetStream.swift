// JetStream over request/reply: every API call is a JSON request to `$JS.API.<…>` answered by
// the stream's or the cluster's leader (https://docs.nats.io/reference/reference-protocols/nats_api_reference).
//
// Answers are JSON objects; a refusal carries `error: {code, err_code, description}` and is
// thrown as `NATSClientError.jetStream`, so callers can react to the code (10071 for a
// fenced append). Publishing to a stream's subject is a plain request whose reply is the
// acknowledgement: the message is stored (on a quorum of replicas) before the ack is sent.
import JSON
import NATSProtocol

/// A JetStream context over one connection.
public struct JetStream: Sendable {
    public let connection: NATSConnection
    /// `$JS.API`, or another domain's prefix.
    public var apiPrefix: String
    /// Bound on each API call. Five seconds, as the server's own JetStream API timeout: a
    /// leader election in the cluster takes a few seconds, and calls during it may wait.
    public var timeoutMilliseconds: Int

    public init(connection: NATSConnection, apiPrefix: String = "$JS.API", timeoutMilliseconds: Int = 5_000) {
        self.connection = connection
        self.apiPrefix = apiPrefix
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Calls `$JS.API.<suffix>` with a JSON body and returns the answer, or throws its error.
    func call(_ suffix: String, _ body: [String: JSONValue]? = nil) async throws(NATSClientError) -> JSONValue {
        let payload = body.map(JSONBody.encode) ?? []
        let reply: NATSMessage
        do {
            reply = try await connection.request(apiPrefix + "." + suffix, payload: payload, timeoutMilliseconds: timeoutMilliseconds)
        } catch .noResponders {
            // Nobody serves the API: JetStream is not enabled for this account, or no server is up.
            throw .jetStream(JetStreamError(code: 503, errorCode: 0, text: "JetStream not available"))
        }
        return try Self.decode(reply)
    }

    /// Parses an API answer, throwing the JetStream error it carries.
    static func decode(_ reply: NATSMessage) throws(NATSClientError) -> JSONValue {
        let value: JSONValue
        do {
            value = try Array(reply.payload).withUnsafeBytes { try JSONParser.parse($0) }
        } catch {
            throw .jetStream(.malformed("not JSON (status \(reply.status.map(String.init) ?? "none"))"))
        }
        guard case .object = value else { throw .jetStream(.malformed("not an object")) }
        if let error = value["error"] {
            throw .jetStream(JetStreamError(code: Int(error.integer("code") ?? 0), errorCode: Int(error.integer("err_code") ?? 0),
                                            text: error.string("description") ?? ""))
        }
        return value
    }

    /// Account information; answers only once the cluster has a meta leader.
    public func accountInfo() async throws(NATSClientError) -> JSONValue {
        try await call("INFO")
    }

    // MARK: Streams

    /// Creates a stream; an existing one with the same configuration is returned as it is,
    /// one with another configuration is refused (10058).
    public func createStream(_ configuration: StreamConfiguration) async throws(NATSClientError) -> StreamInfo {
        try StreamInfo(try await call("STREAM.CREATE." + configuration.name, configuration.json))
    }

    /// The stream as it is, or a new one with `configuration` when there is none. Unlike
    /// `createStream`, finding an existing stream needs only its leader, not the cluster's meta
    /// leader, which may be electing right after a NATS server died: a partition's new owner
    /// takes over then. An existing stream keeps its configuration, except its replica count:
    /// one kept on fewer servers than asked (a deployment that grew from one NATS server to
    /// three) is updated to `configuration.replicas`, through the meta leader.
    public func ensureStream(_ configuration: StreamConfiguration) async throws(NATSClientError) -> StreamInfo {
        let existing: StreamInfo
        do {
            existing = try await streamInfo(configuration.name)
        } catch .jetStream(let error) where error.errorCode == JetStreamError.streamNotFound {
            return try await createStream(configuration)
        }
        guard existing.configuration.replicas < configuration.replicas else { return existing }
        var grown = existing.configuration
        grown.replicas = configuration.replicas
        return try await updateStream(grown)
    }

    /// Changes a stream's configuration (subjects, limits, replicas; not its storage or name).
    public func updateStream(_ configuration: StreamConfiguration) async throws(NATSClientError) -> StreamInfo {
        try StreamInfo(try await call("STREAM.UPDATE." + configuration.name, configuration.json))
    }

    /// A stream's configuration and state; throws 10059 when there is none.
    public func streamInfo(_ name: String) async throws(NATSClientError) -> StreamInfo {
        try StreamInfo(try await call("STREAM.INFO." + name))
    }

    /// Asks `stream`'s leader to step down: the other replicas elect one of themselves. Stored
    /// messages are unaffected; publishes wait for the election (usually well under a second).
    public func stepDownLeader(of stream: String) async throws(NATSClientError) {
        _ = try await call("STREAM.LEADER.STEPDOWN." + stream)
    }

    /// Deletes a stream and everything in it.
    public func deleteStream(_ name: String) async throws(NATSClientError) {
        _ = try await call("STREAM.DELETE." + name)
    }

    /// Removes a stream's messages, or only those on `subject`, or only those before
    /// `beforeSequence` (a journal purged up to its snapshot); returns how many went.
    @discardableResult
    public func purgeStream(_ name: String, subject: String? = nil, keepingLast: Int? = nil,
                            beforeSequence: UInt64? = nil) async throws(NATSClientError) -> UInt64 {
        var body: [String: JSONValue] = [:]
        if let subject { body["filter"] = .string(subject) }
        if let keepingLast { body["keep"] = .integer(Int64(keepingLast)) }
        if let beforeSequence { body["seq"] = .integer(Int64(clamping: beforeSequence)) }
        return try await call("STREAM.PURGE." + name, body.isEmpty ? nil : body).unsigned("purged")
    }

    // MARK: Publishing

    /// Publishes to a stream's subject and waits for the stream's acknowledgement: the message
    /// is stored. `options` carries the fences (expected last sequence, of the stream or of the
    /// subject) and the deduplication id; a fence that fails throws error 10071 and stores nothing.
    public func publish(_ subject: String, payload: [UInt8], options: PublishOptions = PublishOptions(),
                        headers: NATSHeaders = NATSHeaders()) async throws(NATSClientError) -> PublishAck {
        try await startPublish(subject, payload: payload, options: options, headers: headers).acknowledgement()
    }

    /// Queues a publish now and returns a handle to wait for its acknowledgement later. Publishes
    /// started one after the other reach the stream in that order, so a writer can keep many in
    /// flight and still fence each on the sequence the previous one will get.
    public func startPublish(_ subject: String, payload: [UInt8], options: PublishOptions = PublishOptions(),
                             headers: NATSHeaders = NATSHeaders()) throws(NATSClientError) -> PendingAcknowledgement {
        let merged = options.apply(to: headers)
        let reply = try connection.startRequest(subject, payload: payload, headers: merged.fields.isEmpty ? nil : merged,
                                                timeoutMilliseconds: timeoutMilliseconds)
        return PendingAcknowledgement(subject: subject, reply: reply)
    }

    /// Queues a publish now, like `startPublish`, and hands the stream's answer to
    /// `onAcknowledgement` on the connection's loop (see `NATSConnection.startRequest(_:payload:
    /// headers:timeoutMilliseconds:onReply:)`): for a writer whose state lives on the loop.
    public func startPublish(_ subject: String, payload: [UInt8], options: PublishOptions = PublishOptions(),
                             headers: NATSHeaders = NATSHeaders(),
                             onAcknowledgement: @escaping @Sendable (Result<PublishAck, NATSClientError>) -> Void) throws(NATSClientError) {
        let merged = options.apply(to: headers)
        try connection.startRequest(subject, payload: payload, headers: merged.fields.isEmpty ? nil : merged,
                                    timeoutMilliseconds: timeoutMilliseconds) { result in
            onAcknowledgement(Result { () throws(NATSClientError) in try PublishAck.reading(result, publishedTo: subject) })
        }
    }

    // MARK: Reading

    /// The message stored at `sequence`; throws 10037 when there is none.
    public func message(in stream: String, sequence: UInt64) async throws(NATSClientError) -> StoredMessage {
        try StoredMessage(try await call("STREAM.MSG.GET." + stream, ["seq": .integer(Int64(sequence))]))
    }

    /// The messages stored at `sequences`, in order, asked for all at once and answered by the
    /// stream's leader (no consumer, so no meta leader: see `ensureStream`). Throws 10037 for a
    /// sequence with no message. A batch of a few hundred keeps the leader busy without
    /// crowding the connection; more than 65,536 at once is a programming error.
    public func messages(in stream: String, sequences: ClosedRange<UInt64>) async throws(NATSClientError) -> [StoredMessage] {
        precondition(sequences.upperBound - sequences.lowerBound < 65_536, "at most 65,536 messages at once")
        var pending: [PendingReply] = []
        pending.reserveCapacity(sequences.count)
        for sequence in sequences {
            let body = JSONBody.encode(["seq": .integer(Int64(clamping: sequence))])
            pending.append(try connection.startRequest(apiPrefix + ".STREAM.MSG.GET." + stream, payload: body,
                                                       timeoutMilliseconds: timeoutMilliseconds))
        }
        var messages: [StoredMessage] = []
        messages.reserveCapacity(pending.count)
        for reply in pending {
            let answer: NATSMessage
            do {
                answer = try await reply.reply()
            } catch .noResponders {
                throw .jetStream(JetStreamError(code: 503, errorCode: 0, text: "JetStream not available"))
            }
            messages.append(try StoredMessage(try Self.decode(answer)))
        }
        return messages
    }

    /// The first message on `subject` at `sequence` or after; throws 10037 when there is none.
    public func nextMessage(in stream: String, subject: String, from sequence: UInt64) async throws(NATSClientError) -> StoredMessage {
        try StoredMessage(try await call("STREAM.MSG.GET." + stream, ["seq": .integer(Int64(clamping: sequence)),
                                                                       "next_by_subj": .string(subject)]))
    }

    /// The last message stored on `subject`; throws 10037 when there is none.
    public func lastMessage(in stream: String, subject: String) async throws(NATSClientError) -> StoredMessage {
        try StoredMessage(try await call("STREAM.MSG.GET." + stream, ["last_by_subj": .string(subject)]))
    }

    /// Removes one message (KV and object store keep their history otherwise).
    public func deleteMessage(in stream: String, sequence: UInt64) async throws(NATSClientError) {
        _ = try await call("STREAM.MSG.DELETE." + stream, ["seq": .integer(Int64(sequence)), "no_erase": .bool(true)])
    }

    /// Reads a stream in order from `sequence` (see StreamReader.swift).
    public func reader(of stream: String, from sequence: UInt64 = 1, subject: String? = nil) -> StreamReader {
        StreamReader(jetStream: self, stream: stream, startSequence: sequence, subject: subject)
    }
}

/// A JetStream publish on its way to the stream.
public struct PendingAcknowledgement: Sendable {
    let subject: String
    let reply: PendingReply

    /// Waits for the stream's answer; throws its refusal (10071 for a failed fence).
    public func acknowledgement() async throws(NATSClientError) -> PublishAck {
        let result: Result<NATSMessage, NATSClientError>
        do {
            result = .success(try await reply.reply())
        } catch {
            result = .failure(error)
        }
        return try PublishAck.reading(result, publishedTo: subject)
    }
}

extension PublishAck {
    /// The acknowledgement a publish's reply carries, or the refusal it carries thrown.
    static func reading(_ reply: Result<NATSMessage, NATSClientError>, publishedTo subject: String) throws(NATSClientError) -> PublishAck {
        let message: NATSMessage
        switch reply {
        case .success(let received): message = received
        case .failure(.noResponders): throw .jetStream(JetStreamError(code: 503, errorCode: 0, text: "no stream stores \(subject)"))
        case .failure(let error): throw error
        }
        if message.status == nil, let acknowledgement = PublishAck(compact: message.payload) { return acknowledgement }
        return try PublishAck(try JetStream.decode(message))
    }
}
