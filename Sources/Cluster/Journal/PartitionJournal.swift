// A partition's journal as a JetStream stream: stream `BB_P<n>` (`BB_A<n>` for accounts) on subject
// `bb.journal.p<n>`, three replicas in a cluster, file storage. A message is one record, numbered
// by its stream sequence, or a batch of records numbered on from the last (RecordBatch.swift); the
// fence counts messages.
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
import JournalProtocol
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
    /// A stored message is not a record or batch this code wrote (see RecordBatch).
    case corruptRecord(PartitionID, message: UInt64, String)
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
        case .corruptRecord(let partition, let message, let why): "journal of \(partition) unreadable at message \(message): \(why)"
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

    /// Every record after record number `record`, in order, up to the journal's end as it was
    /// when called, read from the message after `message`, the stream sequence of the message
    /// that record ends (nil: the same number, as in a stream written before batches). Returns
    /// where the journal ended. Records are numbered as RecordBatch says; a number that skips is
    /// a hole, refused as `missingRecords`.
    public func replay(after record: UInt64, message: UInt64? = nil, batch: Int = 256,
                       _ apply: (_ record: UInt64, _ payload: [UInt8]) throws -> Void) async throws -> JournalEnd {
        let start = message ?? record
        let info: StreamInfo
        do {
            info = try await jetStream.streamInfo(streamName)
        } catch {
            throw JournalError.unavailable(partition, error)
        }
        var end = JournalEnd(message: start, record: record)
        guard info.lastSequence > start else { return end }
        if info.firstSequence > start + 1 {
            throw JournalError.missingRecords(partition, from: record + 1, through: record + (info.firstSequence - 1 - start))
        }
        do {
            while end.message < info.lastSequence {
                let last = min(info.lastSequence, end.message + UInt64(max(1, batch)))
                for message in try await jetStream.messages(in: streamName, sequences: (end.message + 1)...last) {
                    guard message.sequence == end.message + 1 else {
                        throw JournalError.missingRecords(partition, from: end.record + 1, through: end.record + (message.sequence - 1 - end.message))
                    }
                    let (first, records) = try Self.records(of: message, in: partition)
                    for (offset, payload) in records.enumerated() {
                        let number = first + UInt64(offset)
                        guard number == end.record + 1 else {
                            throw number <= end.record
                                ? JournalError.corruptRecord(partition, message: message.sequence,
                                                             "record \(number) again after record \(end.record)")
                                : JournalError.missingRecords(partition, from: end.record + 1, through: number - 1)
                        }
                        try apply(number, payload)
                        end.record = number
                    }
                    end.message = message.sequence
                }
            }
        } catch NATSClientError.jetStream(let error) where error.errorCode == JetStreamError.noMessageFound {
            throw JournalError.missingRecords(partition, from: end.record + 1, through: end.record + (info.lastSequence - end.message))
        } catch let error as NATSClientError {
            throw JournalError.unavailable(partition, error)
        }
        return end
    }

    /// A stored message's first record number and records: a batch (RecordBatch), or one record
    /// numbered by its stream sequence.
    static func records(of message: StoredMessage, in partition: PartitionID) throws(JournalError) -> (first: UInt64, records: [[UInt8]]) {
        guard let header = message.headers?[RecordBatch.firstRecordHeader] else {
            return (message.sequence, [message.payload])
        }
        guard let first = RecordBatch.firstRecord(fromHeader: header) else {
            throw .corruptRecord(partition, message: message.sequence, "\(RecordBatch.firstRecordHeader) is \(header), not a record number")
        }
        guard let records = RecordBatch.decode(message.payload) else {
            throw .corruptRecord(partition, message: message.sequence, "a batch whose records are cut short")
        }
        return (first, records)
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
