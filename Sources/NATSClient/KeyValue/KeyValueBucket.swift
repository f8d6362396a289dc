// A key-value bucket on JetStream: the stream `KV_<bucket>` with subjects `$KV.<bucket>.>`,
// one subject per key, the last message on a subject its value
// (https://github.com/nats-io/nats-architecture-and-design/blob/main/adr/ADR-8.md).
//
// A key's revision is the stream sequence of its last message, so compare-and-set is a
// conditional publish: `create` expects no value, `update` the revision read. Two writers
// racing from the same revision cannot both win: the stream leader orders the appends and
// refuses the second with 10071 (how, and why on the whole bucket, is at `write`). That is
// what a lease is built on. A delete is a message too (header `KV-Operation: DEL`), so it has a revision,
// and a key deleted can be created again.
import JSON
import NATSProtocol

public struct KeyValueBucket: Sendable {
    public let name: String
    public let jetStream: JetStream

    public var streamName: String { Self.streamName(ofBucket: name) }
    public static func streamName(ofBucket name: String) -> String { "KV_" + name }
    var subjectPrefix: String { "$KV." + name + "." }

    /// What a bucket is made with.
    public struct Configuration: Sendable {
        /// Values kept per key (1: only the current one).
        public var history: Int64 = 1
        public var replicas = 1
        /// Keys not written for this long go; nil: never.
        public var maxAgeNanoseconds: Int64?
        public var storage = StreamConfiguration.Storage.file
        public init(history: Int64 = 1, replicas: Int = 1) {
            self.history = history
            self.replicas = replicas
        }
    }

    /// Creates the bucket's stream (or finds it with the same configuration).
    public static func create(_ name: String, in jetStream: JetStream,
                              configuration: Configuration = Configuration()) async throws(NATSClientError) -> KeyValueBucket {
        guard isValidBucketName(name) else { throw .invalidCommand(.invalidSubject(name)) }
        var stream = StreamConfiguration(name: "KV_" + name, subjects: ["$KV.\(name).>"])
        stream.replicas = configuration.replicas
        stream.maxMessagesPerSubject = configuration.history
        stream.maxAgeNanoseconds = configuration.maxAgeNanoseconds
        stream.storage = configuration.storage
        stream.discard = .new
        stream.allowsRollup = true
        stream.deniesDelete = true
        stream.allowsDirect = true
        stream.duplicateWindowNanoseconds = min(configuration.maxAgeNanoseconds ?? 120_000_000_000, 120_000_000_000)
        _ = try await jetStream.createStream(stream)
        return KeyValueBucket(name: name, jetStream: jetStream)
    }

    /// The same bucket, each call bounded by `milliseconds` instead of the context's timeout.
    public func bounded(toMilliseconds milliseconds: Int) -> KeyValueBucket {
        var jetStream = jetStream
        jetStream.timeoutMilliseconds = milliseconds
        return KeyValueBucket(name: name, jetStream: jetStream)
    }

    /// A bucket that exists; throws 10059 otherwise.
    public static func open(_ name: String, in jetStream: JetStream) async throws(NATSClientError) -> KeyValueBucket {
        guard isValidBucketName(name) else { throw .invalidCommand(.invalidSubject(name)) }
        _ = try await jetStream.streamInfo("KV_" + name)
        return KeyValueBucket(name: name, jetStream: jetStream)
    }

    init(name: String, jetStream: JetStream) {
        self.name = name
        self.jetStream = jetStream
    }

    // MARK: Reading

    /// The current value, or nil when the key was never written or was deleted.
    public func get(_ key: String) async throws(NATSClientError) -> KeyValueEntry? {
        guard let entry = try await latest(key), entry.operation == .put else { return nil }
        return entry
    }

    /// The last entry, deletes included: a deleted key's revision is what a lease holder's
    /// compare-and-set lost to.
    public func latest(_ key: String) async throws(NATSClientError) -> KeyValueEntry? {
        let subject = try subject(for: key)
        do {
            let message = try await jetStream.lastMessage(in: streamName, subject: subject)
            return KeyValueEntry(bucket: name, key: key, stored: message)
        } catch .jetStream(let error) where error.errorCode == JetStreamError.noMessageFound {
            return nil
        }
    }

    // MARK: Writing

    /// Writes a value whatever was there; returns its revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) async throws(NATSClientError) -> UInt64 {
        try await jetStream.publish(try subject(for: key), payload: value).sequence
    }

    /// Writes a value only if the key has none (never written, or deleted); returns its
    /// revision. Throws 10071 (`isWrongLastSequence`) when the key has a value.
    @discardableResult
    public func create(_ key: String, _ value: [UInt8]) async throws(NATSClientError) -> UInt64 {
        try await write(key, value, headers: NATSHeaders(), expecting: .absent)
    }

    /// Writes a value only if the key's revision is still `revision`: compare-and-set.
    /// Throws 10071 when another write came first.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], revision: UInt64) async throws(NATSClientError) -> UInt64 {
        try await write(key, value, headers: NATSHeaders(), expecting: .revision(revision))
    }

    /// Deletes the key (a delete marker; history stays until it ages out). With `revision`,
    /// only if the key is still at that revision: a lease released by its holder only.
    @discardableResult
    public func delete(_ key: String, revision: UInt64? = nil) async throws(NATSClientError) -> UInt64 {
        var headers = NATSHeaders()
        headers.append("KV-Operation", "DEL")
        guard let revision else { return try await jetStream.publish(try subject(for: key), payload: [], headers: headers).sequence }
        return try await write(key, [], headers: headers, expecting: .revision(revision))
    }

    private enum Expectation {
        case absent
        case revision(UInt64)
    }

    /// Conditional writes are fenced on the whole bucket's last sequence, not only on the
    /// key's: the key is read, its revision checked, and the write carries
    /// `Nats-Expected-Last-Sequence` of the bucket's stream as it was before that read. The
    /// per-key header alone (`Nats-Expected-Last-Subject-Sequence`) is checked by clustered
    /// nats-server only against stored messages, not against appends still being replicated,
    /// so two writers racing from one revision could both win (nats-server issue 4320, fixed
    /// in 2.9.21; Debian ships 2.9.10). The stream's last sequence is checked against what is
    /// in flight, so exactly one wins. The cost: three round trips instead of one, and a write
    /// to another key in between makes the attempt start over (up to `maxWriteAttempts`).
    private func write(_ key: String, _ value: [UInt8], headers: NATSHeaders,
                       expecting expectation: Expectation) async throws(NATSClientError) -> UInt64 {
        let subject = try subject(for: key)
        for _ in 0..<Self.maxWriteAttempts {
            let bucketSequence = try await jetStream.streamInfo(streamName).lastSequence
            let latest = try await latest(key)
            let current = latest?.revision ?? 0
            switch expectation {
            case .absent:
                if let latest, latest.operation == .put { throw Self.wrongRevision(current) }
            case .revision(let revision):
                if current != revision { throw Self.wrongRevision(current) }
            }
            let options = PublishOptions(expectedLastSequence: bucketSequence, expectedLastSubjectSequence: current)
            do {
                return try await jetStream.publish(subject, payload: value, options: options, headers: headers).sequence
            } catch .jetStream(let error) where error.isWrongLastSequence {
                continue
            }
        }
        throw .timeout
    }

    /// A busy bucket (other keys written between the read and the write) is retried this often.
    static let maxWriteAttempts = 16

    private static func wrongRevision(_ current: UInt64) -> NATSClientError {
        .jetStream(JetStreamError(code: 400, errorCode: JetStreamError.wrongLastSequence, text: "wrong last sequence: \(current)"))
    }

    // MARK: Watching

    /// Follows one key (or a pattern of keys, `*` and `>` allowed): first its current entry,
    /// then every change, deletes included.
    public func watch(_ key: String) throws(NATSClientError) -> KeyWatch {
        guard Self.isValidKey(key, allowsWildcards: true) else { throw .invalidCommand(.invalidSubject(key)) }
        return KeyWatch(bucket: self, subject: subjectPrefix + key)
    }

    // MARK: Names

    func subject(for key: String) throws(NATSClientError) -> String {
        guard Self.isValidKey(key, allowsWildcards: false) else { throw .invalidCommand(.invalidSubject(key)) }
        return subjectPrefix + key
    }

    /// Letters, digits, `-` and `_`.
    static func isValidBucketName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    /// Letters, digits and `-/_=.`, as dot-separated tokens (ADR-8's key rule).
    static func isValidKey(_ key: String, allowsWildcards: Bool) -> Bool {
        guard !key.isEmpty, !key.hasPrefix("."), !key.hasSuffix(".") else { return false }
        for token in key.split(separator: ".", omittingEmptySubsequences: false) {
            if allowsWildcards, token == "*" || token == ">" { continue }
            guard !token.isEmpty, token.utf8.allSatisfy({ isAlphanumeric($0) || "-/_=".utf8.contains($0) }) else { return false }
        }
        return allowsWildcards ? Subject.isValidForSubscribe(key) : Subject.isValidForPublish(key)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// One entry of a key's history.
public struct KeyValueEntry: Sendable, Equatable {
    public enum Operation: String, Sendable {
        case put = "PUT"
        case delete = "DEL"
        case purge = "PURGE"
    }

    public var bucket: String
    public var key: String
    public var value: [UInt8]
    /// The stream sequence of this entry: what `update` and `delete` compare against.
    public var revision: UInt64
    public var operation: Operation

    init(bucket: String, key: String, stored: StoredMessage) {
        self.bucket = bucket
        self.key = key
        value = stored.payload
        revision = stored.sequence
        operation = stored.headers?["KV-Operation"].flatMap(Operation.init(rawValue:)) ?? .put
    }
}
