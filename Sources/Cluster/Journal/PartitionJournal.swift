// A partition's journal as a JetStream stream (docs/scale-out.md, sections 3 and 6): stream
// `BB_P<n>` (`BB_A<n>` for accounts) on subject `bb.journal.p<n>`, three replicas in a cluster,
// file storage, one message per record, the stream sequence the record's sequence.
//
// Append is the commit point: a publish fenced with `Nats-Expected-Last-Sequence`, acknowledged
// only once a quorum stored it. The fence is what makes ownership safe. The owner appends after
// the sequence it last wrote (or replayed to); a node that lost its lease and still believes it
// owns the partition appends after a sequence the stream has moved past, and is refused with
// `.fenced`. Lease timing and clocks play no part in that.
//
// Recovery is the latest snapshot plus the records after it (`recover`); it refuses a journal
// that no longer holds the records after the snapshot (purged further), rather than build a
// state with a hole in it. Recovery asks only the stream's leader (its info, then its records
// by sequence, many requests in flight), never the cluster's meta leader: a node takes a
// partition over right after another died, and the NATS server that died may have been the
// meta leader, whose election takes 4 to 9 s or more, where the stream's own may be done.
import NATSClient

/// Why an append or a replay failed.
public enum JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The journal no longer ends at the sequence the append expected: another node appended
    /// since. This node must stop serving the partition; nothing of the refused record was stored.
    case fenced(PartitionID, expected: UInt64)
    /// Records `from` through `through` are gone from the stream (purged) and no snapshot covers
    /// them.
    case missingRecords(PartitionID, from: UInt64, through: UInt64)
    /// NATS did not answer as asked; an append may or may not have been stored (retry it with the
    /// same message id).
    case unavailable(PartitionID, NATSClientError)
    /// The stored snapshot is not one this code wrote (see PartitionSnapshot).
    case corruptSnapshot(PartitionID, String)
    /// Another node stored the partition's snapshot since the revision a conditional save expected.
    case snapshotReplaced(PartitionID)

    public var description: String {
        switch self {
        case .fenced(let partition, let expected):
            "append to \(partition) refused: its journal no longer ends at \(expected) (another node owns it now)"
        case .missingRecords(let partition, let from, let through):
            "journal of \(partition) lacks records \(from)...\(through) and no snapshot covers them"
        case .unavailable(let partition, let error): "journal of \(partition) unavailable: \(error)"
        case .corruptSnapshot(let partition, let why): "snapshot of \(partition) unreadable: \(why)"
        case .snapshotReplaced(let partition): "snapshot of \(partition) was replaced by another node's meanwhile"
        }
    }
}

public struct PartitionJournal: Sendable {
    public let partition: PartitionID
    public let jetStream: JetStream

    public var streamName: String { Self.streamName(of: partition) }

    /// `BB_P<n>` for a board partition, `BB_A<n>` for an account partition.
    public static func streamName(of partition: PartitionID) -> String {
        partition.space == .boards ? "BB_P\(partition.index)" : "BB_A\(partition.index)"
    }
    public var subject: String { "bb.journal.\(partition)" }

    /// Creates the stream (or finds it as configured): `replicas` copies, 3 in a cluster.
    public static func create(_ partition: PartitionID, in jetStream: JetStream,
                              replicas: Int = 3) async throws(JournalError) -> PartitionJournal {
        let journal = PartitionJournal(partition: partition, jetStream: jetStream)
        do {
            _ = try await jetStream.ensureStream(.durableLog(name: journal.streamName, subject: journal.subject, replicas: replicas))
        } catch {
            throw .unavailable(partition, error)
        }
        return journal
    }

    public init(partition: PartitionID, jetStream: JetStream) {
        self.partition = partition
        self.jetStream = jetStream
    }

    /// The sequence of the last record (0: none yet).
    public func lastSequence() async throws(JournalError) -> UInt64 {
        do {
            return try await jetStream.streamInfo(streamName).lastSequence
        } catch {
            throw .unavailable(partition, error)
        }
    }

    /// Appends `record` if the journal still ends at `expected`; returns its sequence. With
    /// `messageID`, a retry of an append whose acknowledgement was lost is answered with the
    /// first copy's sequence, not stored twice.
    public func append(_ record: [UInt8], after expected: UInt64, messageID: String? = nil) async throws(JournalError) -> UInt64 {
        do {
            let ack = try await jetStream.publish(subject, payload: record,
                                                  options: PublishOptions(messageID: messageID, expectedLastSequence: expected,
                                                                          expectedStream: streamName))
            return ack.sequence
        } catch .jetStream(let error) where error.isWrongLastSequence {
            throw .fenced(partition, expected: expected)
        } catch {
            throw .unavailable(partition, error)
        }
    }

    /// Every record after `sequence`, in order, up to the journal's end as it was when called;
    /// returns the last sequence passed to `apply` (or `sequence` when there were none).
    public func replay(after sequence: UInt64, batch: Int = 256,
                       _ apply: (_ sequence: UInt64, _ record: [UInt8]) throws -> Void) async throws -> UInt64 {
        let info: StreamInfo
        do {
            info = try await jetStream.streamInfo(streamName)
        } catch {
            throw JournalError.unavailable(partition, error)
        }
        guard info.lastSequence > sequence else { return sequence }
        if info.firstSequence > sequence + 1 {
            throw JournalError.missingRecords(partition, from: sequence + 1, through: info.firstSequence - 1)
        }
        var last = sequence
        do {
            while last < info.lastSequence {
                let end = min(info.lastSequence, last + UInt64(max(1, batch)))
                for message in try await jetStream.messages(in: streamName, sequences: (last + 1)...end) {
                    guard message.sequence == last + 1 else {
                        throw JournalError.missingRecords(partition, from: last + 1, through: message.sequence - 1)
                    }
                    try apply(message.sequence, message.payload)
                    last = message.sequence
                }
            }
        } catch NATSClientError.jetStream(let error) where error.errorCode == JetStreamError.noMessageFound {
            throw JournalError.missingRecords(partition, from: last + 1, through: info.lastSequence)
        } catch let error as NATSClientError {
            throw JournalError.unavailable(partition, error)
        }
        return last
    }

    /// Removes the records up to and including `sequence` (after a snapshot covering them is stored).
    public func purge(through sequence: UInt64) async throws(JournalError) {
        do {
            try await jetStream.purgeStream(streamName, beforeSequence: sequence + 1)
        } catch {
            throw .unavailable(partition, error)
        }
    }
}
