// A stream's configuration, as the STREAM.CREATE / UPDATE API takes it.
import JSON

public struct StreamConfiguration: Sendable, Equatable {
    public enum Storage: String, Sendable { case file, memory }
    public enum Retention: String, Sendable { case limits, interest, workqueue }
    public enum DiscardPolicy: String, Sendable { case old, new }

    public var name: String
    public var subjects: [String]
    /// Copies kept by the cluster (1–5). A journal wants 3: it survives the loss of one node.
    public var replicas = 1
    public var storage = Storage.file
    public var retention = Retention.limits
    /// What happens at a limit: drop the oldest, or refuse the new message.
    public var discard = DiscardPolicy.old
    /// Limits; nil is unlimited.
    public var maxMessages: Int64?
    public var maxBytes: Int64?
    public var maxMessagesPerSubject: Int64?
    public var maxMessageSize: Int32?
    /// Age after which messages go, in nanoseconds.
    public var maxAgeNanoseconds: Int64?
    /// Window in which a repeated `Nats-Msg-Id` is recognised as a duplicate, in nanoseconds.
    /// Nil: the server's default, two minutes.
    public var duplicateWindowNanoseconds: Int64?
    /// `Nats-Rollup` headers may replace a subject's (or the stream's) earlier messages.
    public var allowsRollup = false
    public var deniesDelete = false
    public var deniesPurge = false
    /// Direct get (`$JS.API.DIRECT.GET`) from any replica.
    public var allowsDirect = false

    public init(name: String, subjects: [String]) {
        self.name = name
        self.subjects = subjects
    }

    var json: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "name": .string(name),
            "subjects": .array(subjects.map(JSONValue.string)),
            "num_replicas": .integer(Int64(replicas)),
            "storage": .string(storage.rawValue),
            "retention": .string(retention.rawValue),
            "discard": .string(discard.rawValue),
            "max_msgs": .integer(maxMessages ?? -1),
            "max_bytes": .integer(maxBytes ?? -1),
            "max_msgs_per_subject": .integer(maxMessagesPerSubject ?? -1),
            "max_msg_size": .integer(Int64(maxMessageSize ?? -1)),
            "max_age": .integer(maxAgeNanoseconds ?? 0),
            "max_consumers": .integer(-1),
            "allow_rollup_hdrs": .bool(allowsRollup),
            "deny_delete": .bool(deniesDelete),
            "deny_purge": .bool(deniesPurge),
            "allow_direct": .bool(allowsDirect),
        ]
        if let duplicateWindowNanoseconds { members["duplicate_window"] = .integer(duplicateWindowNanoseconds) }
        return members
    }

    init(_ value: JSONValue) {
        name = value.string("name") ?? ""
        subjects = value.strings("subjects")
        replicas = Int(value.integer("num_replicas") ?? 1)
        storage = value.string("storage").flatMap(Storage.init(rawValue:)) ?? .file
        retention = value.string("retention").flatMap(Retention.init(rawValue:)) ?? .limits
        discard = value.string("discard").flatMap(DiscardPolicy.init(rawValue:)) ?? .old
        func limit(_ key: String) -> Int64? { value.integer(key).flatMap { $0 < 0 ? nil : $0 } }
        maxMessages = limit("max_msgs")
        maxBytes = limit("max_bytes")
        maxMessagesPerSubject = limit("max_msgs_per_subject")
        maxMessageSize = limit("max_msg_size").map { Int32(clamping: $0) }
        maxAgeNanoseconds = value.integer("max_age").flatMap { $0 == 0 ? nil : $0 }
        duplicateWindowNanoseconds = value.integer("duplicate_window")
        allowsRollup = value.bool("allow_rollup_hdrs")
        deniesDelete = value.bool("deny_delete")
        deniesPurge = value.bool("deny_purge")
        allowsDirect = value.bool("allow_direct")
    }
}

/// A stream's configuration, state and placement.
public struct StreamInfo: Sendable {
    public var configuration: StreamConfiguration
    public var messages: UInt64
    public var bytes: UInt64
    public var firstSequence: UInt64
    public var lastSequence: UInt64
    /// The replica that leads the stream now, and the others.
    public var leader: String?
    public var replicaNames: [String]

    init(_ value: JSONValue) throws(NATSClientError) {
        guard let config = value["config"], let state = value["state"] else {
            throw .jetStream(.malformed("stream info without config or state"))
        }
        configuration = StreamConfiguration(config)
        messages = state.unsigned("messages")
        bytes = state.unsigned("bytes")
        firstSequence = state.unsigned("first_seq")
        lastSequence = state.unsigned("last_seq")
        leader = value["cluster"]?.string("leader")
        if case .array(let replicas)? = value["cluster"]?["replicas"] {
            replicaNames = replicas.compactMap { $0.string("name") }
        } else {
            replicaNames = []
        }
    }
}
