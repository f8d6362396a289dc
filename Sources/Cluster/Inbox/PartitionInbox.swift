// The inbox of an account partition as a JetStream stream, through which personal events committed
// by any partition reach the one owner that numbers their users' streams: `BB_I<n>` on subject
// `bb.inbox.a<n>`, three replicas in a cluster, file storage. Sources publish their outbox's
// messages to it (InboxProtocol's `InboxOutbox`, with no fence: several sources share the stream,
// and the reader's numbering rule, not the stream, drops copies and messages after a gap); the
// account partition's owner reads it in order from its snapshot's position (`InboxReader`). Reading
// asks the stream's leader by sequence, like the journal's replay: no consumer, so no meta leader.
import InboxProtocol
import NATSClient

public struct PartitionInbox: Sendable {
    public let partition: PartitionID
    public let jetStream: JetStream

    public static func streamName(of partition: PartitionID) -> String { "BB_I\(partition.index)" }
    public static func subject(of partition: PartitionID) -> String { "bb.inbox.\(partition)" }

    /// Where a source says it stored a message in the inbox, for a reader in another process:
    /// a core subject, outside the stream, with an empty payload.
    public static func storedSubject(of partition: PartitionID) -> String { "bb.inbox-stored.\(partition)" }

    public var streamName: String { Self.streamName(of: partition) }
    public var subject: String { Self.subject(of: partition) }
    public var storedSubject: String { Self.storedSubject(of: partition) }

    /// Finds the stream, or makes it with `replicas` copies (3 in a cluster).
    public static func create(_ partition: PartitionID, in jetStream: JetStream,
                              replicas: Int = 3) async throws(JournalError) -> PartitionInbox {
        precondition(partition.space == .accounts, "only an account partition has an inbox")
        let inbox = PartitionInbox(partition: partition, jetStream: jetStream)
        do {
            _ = try await jetStream.ensureStream(.durableLog(name: inbox.streamName, subject: inbox.subject, replicas: replicas))
        } catch {
            throw .unavailable(partition, error)
        }
        return inbox
    }

    public init(partition: PartitionID, jetStream: JetStream) {
        self.partition = partition
        self.jetStream = jetStream
    }

    /// One stored message: decoded, or why it could not be (the reader passes over it).
    public struct Stored: Sendable {
        public let sequence: UInt64
        public let message: Result<InboxMessage, InboxProtocolError>
    }

    /// The messages after `position`, in order, at most `maximum` of them, up to the stream's end
    /// as it was when called (none when nothing is newer). A message may be up to 256 KiB (a
    /// burst of entries), and all of them are asked for at once: 16 is up to 4 MiB in memory and
    /// in flight, well within one request's timeout.
    public func read(after position: UInt64, maximum: Int = 16) async throws(JournalError) -> [Stored] {
        let stored: [StoredMessage]
        do {
            let info = try await jetStream.streamInfo(streamName)
            guard info.lastSequence > position else { return [] }
            guard info.firstSequence <= position + 1 else {
                throw JournalError.missingRecords(partition, from: position + 1, through: info.firstSequence - 1)
            }
            let end = min(info.lastSequence, position + UInt64(max(1, min(maximum, 65_536))))
            stored = try await jetStream.messages(in: streamName, sequences: (position + 1)...end)
        } catch let error as JournalError {
            throw error
        } catch {
            throw .unavailable(partition, error as? NATSClientError ?? .closed)
        }
        return stored.map { message in
            Stored(sequence: message.sequence,
                   message: Result { () throws(InboxProtocolError) in try InboxCodec.decode(message.payload) })
        }
    }

    /// Drops the messages through `sequence`: once a snapshot of the account partition holds a
    /// reader's position at or past it, nothing reads them again.
    public func purge(through sequence: UInt64) async throws(JournalError) {
        do {
            try await jetStream.purgeStream(streamName, beforeSequence: sequence + 1)
        } catch {
            throw .unavailable(partition, error)
        }
    }
}
