// A partition's snapshot in the JetStream object store: bucket `bb-snapshots`, object `p<n>` or
// `a<n>`, replaced whole by each new snapshot (the object store's metadata is written last, so a
// reader sees the old one or the new one).
//
// The object is self-describing: magic `BBPS`, a format version, the partition's name, the last
// journal sequence the state includes (big-endian), then the state's bytes, opaque here (the
// BangbangStorage snapshot or a partition's half of one). Format 2 follows the state with what
// carries the partition's personal events over the inbox: a count of sections, then each section a
// kind byte (0 the state, 1 the outbox, 2 the inbox reader), a 4-byte big-endian length and its
// bytes (InboxProtocol's encoding for the last two), and 3 the stream sequence of the message the
// state ends with (8 bytes, big-endian), present only once the journal holds batches
// (RecordBatch.swift), when it is no longer the last record's number; without any of them, format 1
// is written, which nodes from before the inbox read. The object store checks size and SHA-256 on
// read; the header is checked here, so a snapshot of another partition or format is refused, never
// applied.
import NATSClient

public struct PartitionSnapshot: Sendable, Equatable {
    public var partition: PartitionID
    /// The last journal sequence the state includes: recovery replays from the one after.
    public var sequence: UInt64
    public var state: [UInt8]
    /// The partition's outbox to the account partitions' inboxes, at the same cut (InboxStateCodec).
    public var outbox: [UInt8]?
    /// An account partition's inbox reader: how far its inbox is applied to the personal streams
    /// `state` holds (InboxStateCodec).
    public var inbox: [UInt8]?
    /// The stream sequence of the journal message whose last record is `sequence`; nil when it is
    /// `sequence` itself (a journal with no batch before it).
    public var message: UInt64?

    public init(partition: PartitionID, sequence: UInt64, state: [UInt8], outbox: [UInt8]? = nil, inbox: [UInt8]? = nil,
                message: UInt64? = nil) {
        self.partition = partition
        self.sequence = sequence
        self.state = state
        self.outbox = outbox
        self.inbox = inbox
        self.message = message == sequence ? nil : message
    }

    static let magic = Array("BBPS".utf8)
    static let plainVersion: UInt8 = 1
    static let sectionedVersion: UInt8 = 2
    static let stateKind: UInt8 = 0
    static let outboxKind: UInt8 = 1
    static let inboxKind: UInt8 = 2
    static let messageKind: UInt8 = 3

    public func encoded() -> [UInt8] {
        let name = Array(partition.description.utf8)
        let position = message.map { message in stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: message >> UInt64($0)) } }
        let sections = [(Self.outboxKind, outbox), (Self.inboxKind, inbox), (Self.messageKind, position)]
            .compactMap { kind, bytes in bytes.map { (kind, $0) } }
        var bytes = Self.magic
        bytes.append(sections.isEmpty ? Self.plainVersion : Self.sectionedVersion)
        bytes.append(UInt8(name.count))
        bytes += name
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: sequence >> UInt64(shift))) }
        if sections.isEmpty {
            bytes += state
            return bytes
        }
        bytes.append(UInt8(1 + sections.count))
        Self.appendSection(Self.stateKind, state, to: &bytes)
        for (kind, section) in sections { Self.appendSection(kind, section, to: &bytes) }
        return bytes
    }

    private static func appendSection(_ kind: UInt8, _ section: [UInt8], to bytes: inout [UInt8]) {
        precondition(section.count <= Int(UInt32.max), "a snapshot section is at most 4 GiB")
        bytes.append(kind)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: section.count >> shift)) }
        bytes += section
    }

    /// Reads an encoded snapshot, which must be `partition`'s.
    public init(decoding bytes: [UInt8], of partition: PartitionID) throws(JournalError) {
        let name = Array(partition.description.utf8)
        let headerSize = Self.magic.count + 2 + name.count + 8
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == Self.magic else {
            throw .corruptSnapshot(partition, "not a Bangbang partition snapshot")
        }
        guard bytes[4] == Self.plainVersion || bytes[4] == Self.sectionedVersion else {
            throw .corruptSnapshot(partition, "format version \(bytes[4]), expected \(Self.plainVersion) or \(Self.sectionedVersion)")
        }
        guard Int(bytes[5]) == name.count, Array(bytes[6..<(6 + name.count)]) == name else {
            throw .corruptSnapshot(partition, "the snapshot is of another partition")
        }
        var sequence: UInt64 = 0
        for byte in bytes[(6 + name.count)..<headerSize] { sequence = sequence << 8 | UInt64(byte) }
        guard bytes[4] == Self.sectionedVersion else {
            self.init(partition: partition, sequence: sequence, state: Array(bytes[headerSize...]))
            return
        }
        guard bytes.count > headerSize else { throw .corruptSnapshot(partition, "the count of sections is missing") }
        let count = Int(bytes[headerSize])
        var sections: [UInt8: [UInt8]] = [:]
        var offset = headerSize + 1
        for _ in 0..<count {
            guard bytes.count - offset >= 5 else { throw .corruptSnapshot(partition, "a section's header is cut short") }
            let kind = bytes[offset]
            var length = 0
            for byte in bytes[(offset + 1)..<(offset + 5)] { length = length << 8 | Int(byte) }
            offset += 5
            guard bytes.count - offset >= length else { throw .corruptSnapshot(partition, "section \(kind) is cut short") }
            guard kind <= Self.messageKind, sections[kind] == nil else {
                throw .corruptSnapshot(partition, "section \(kind) is unknown or appears twice")
            }
            sections[kind] = Array(bytes[offset..<(offset + length)])
            offset += length
        }
        guard offset == bytes.count else { throw .corruptSnapshot(partition, "bytes follow the last section") }
        guard let state = sections[Self.stateKind] else { throw .corruptSnapshot(partition, "the state's section is missing") }
        var message: UInt64?
        if let position = sections[Self.messageKind] {
            guard position.count == 8 else { throw .corruptSnapshot(partition, "the message section is not 8 bytes") }
            let value = position.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard value < sequence else {
                throw .corruptSnapshot(partition, "message \(value) cannot end record \(sequence): a message holds at least one record")
            }
            message = value
        }
        self.init(partition: partition, sequence: sequence, state: state, outbox: sections[Self.outboxKind],
                  inbox: sections[Self.inboxKind], message: message)
    }
}

/// The snapshots of every partition, one object each.
public struct SnapshotStore: Sendable {
    public let objects: ObjectStore

    public static let bucketName = "bb-snapshots"

    /// Creates (or finds) the bucket: `replicas` copies, 3 in a cluster.
    public static func create(in jetStream: JetStream, name: String = bucketName,
                              replicas: Int = 3) async throws(NATSClientError) -> SnapshotStore {
        SnapshotStore(objects: try await ObjectStore.create(name, in: jetStream, replicas: replicas))
    }

    public init(objects: ObjectStore) {
        self.objects = objects
    }

    /// Stores `snapshot`, replacing the partition's previous one once it is whole.
    public func save(_ snapshot: PartitionSnapshot) async throws(JournalError) {
        do {
            _ = try await objects.put(snapshot.partition.description, snapshot.encoded())
        } catch {
            throw .unavailable(snapshot.partition, error)
        }
    }

    /// Stores `snapshot` only if the partition's snapshot is still the one at `revision` (0: none),
    /// and returns the new one's revision. A snapshot stored meanwhile by another node (an owner
    /// that lost its lease writing late, or the next owner) fails it with `.snapshotReplaced`.
    public func save(_ snapshot: PartitionSnapshot, replacing revision: UInt64) async throws(JournalError) -> UInt64 {
        do {
            return try await objects.put(snapshot.partition.description, snapshot.encoded(), ifRevision: revision).revision
        } catch .jetStream(let error) where error.isWrongLastSequence {
            throw .snapshotReplaced(snapshot.partition)
        } catch {
            throw .unavailable(snapshot.partition, error)
        }
    }

    /// The partition's latest snapshot; nil when it has none.
    public func latest(of partition: PartitionID) async throws(JournalError) -> PartitionSnapshot? {
        try await latestWithRevision(of: partition).snapshot
    }

    /// The partition's latest snapshot and its revision (nil and 0 when it has none).
    public func latestWithRevision(of partition: PartitionID) async throws(JournalError)
        -> (snapshot: PartitionSnapshot?, revision: UInt64) {
        let object: (info: ObjectInfo, data: [UInt8])
        do {
            guard let found = try await objects.object(partition.description) else {
                // None, or deleted: a deletion's metadata has a revision too.
                return (nil, try await objects.info(partition.description)?.revision ?? 0)
            }
            object = found
        } catch {
            throw .unavailable(partition, error)
        }
        return (try PartitionSnapshot(decoding: object.data, of: partition), object.info.revision)
    }
}

extension PartitionJournal {
    /// Rebuilds the partition: `restore` gets the latest snapshot (nil when there is none) and its
    /// revision (what the owner's next snapshot replaces), then `apply` every record after it.
    /// Returns where the journal ends: the owner's next append is fenced on its last message,
    /// and numbers its records on from the last record.
    public func recover(from snapshots: SnapshotStore, restore: (PartitionSnapshot?, _ revision: UInt64) throws -> Void,
                        apply: (_ record: UInt64, _ payload: [UInt8]) throws -> Void) async throws -> JournalEnd {
        let (snapshot, revision) = try await snapshots.latestWithRevision(of: partition)
        try restore(snapshot, revision)
        return try await replay(after: snapshot?.sequence ?? 0, message: snapshot?.message, apply)
    }
}
