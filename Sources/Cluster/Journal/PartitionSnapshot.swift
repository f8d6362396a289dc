// A partition's snapshot in the JetStream object store (docs/scale-out.md, section 4): bucket
// `bb-snapshots`, object `p<n>`, replaced whole by each new snapshot (the object store's
// metadata is written last, so a reader sees the old one or the new one).
//
// The object is self-describing: magic `BBPS`, format version 1, the partition's name, the last
// journal sequence the state includes (big-endian), then the state's bytes, opaque here (the
// BangbangStorage snapshot). The object store checks size and SHA-256 on read; the header is
// checked here, so a snapshot of another partition or format is refused, never applied.
import NATSClient

public struct PartitionSnapshot: Sendable, Equatable {
    public var partition: PartitionID
    /// The last journal sequence the state includes: recovery replays from the one after.
    public var sequence: UInt64
    public var state: [UInt8]

    public init(partition: PartitionID, sequence: UInt64, state: [UInt8]) {
        self.partition = partition
        self.sequence = sequence
        self.state = state
    }

    static let magic = Array("BBPS".utf8)
    static let version: UInt8 = 1

    public func encoded() -> [UInt8] {
        let name = Array(partition.description.utf8)
        var bytes = Self.magic
        bytes.append(Self.version)
        bytes.append(UInt8(name.count))
        bytes += name
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: sequence >> UInt64(shift))) }
        bytes += state
        return bytes
    }

    /// Reads an encoded snapshot, which must be `partition`'s.
    public init(decoding bytes: [UInt8], of partition: PartitionID) throws(JournalError) {
        let name = Array(partition.description.utf8)
        let headerSize = Self.magic.count + 2 + name.count + 8
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == Self.magic else {
            throw .corruptSnapshot(partition, "not a Bangbang partition snapshot")
        }
        guard bytes[4] == Self.version else { throw .corruptSnapshot(partition, "format version \(bytes[4]), expected \(Self.version)") }
        guard Int(bytes[5]) == name.count, Array(bytes[6..<(6 + name.count)]) == name else {
            throw .corruptSnapshot(partition, "the snapshot is of another partition")
        }
        var sequence: UInt64 = 0
        for byte in bytes[(6 + name.count)..<headerSize] { sequence = sequence << 8 | UInt64(byte) }
        self.init(partition: partition, sequence: sequence, state: Array(bytes[headerSize...]))
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

    /// The partition's latest snapshot; nil when it has none.
    public func latest(of partition: PartitionID) async throws(JournalError) -> PartitionSnapshot? {
        let bytes: [UInt8]?
        do {
            bytes = try await objects.get(partition.description)
        } catch {
            throw .unavailable(partition, error)
        }
        guard let bytes else { return nil }
        return try PartitionSnapshot(decoding: bytes, of: partition)
    }
}

extension PartitionJournal {
    /// Rebuilds the partition: `restore` gets the latest snapshot (nil when there is none), then
    /// `apply` every record after it. Returns the journal sequence the state is now at: the
    /// owner's next append is fenced on it.
    public func recover(from snapshots: SnapshotStore, restore: (PartitionSnapshot?) throws -> Void,
                        apply: (_ sequence: UInt64, _ record: [UInt8]) throws -> Void) async throws -> UInt64 {
        let snapshot = try await snapshots.latest(of: partition)
        try restore(snapshot)
        return try await replay(after: snapshot?.sequence ?? 0, apply)
    }
}
