// Where a campus's boards and a user's account live when several nodes share the work
// (docs/scale-out.md, sections 2 and 8).
//
// Pure arithmetic with no I/O and no shared state: every node computes the same partition and the
// same preferred owner from the same inputs, so a request is routed without a lookup and nodes
// agree on who should own what without talking. The hashes are fixed here (FNV-1a, not Swift's
// per-process seeded `Hasher`) because their results are part of the on-disk and on-the-wire
// layout: a journal stream is named after its partition.
//
// Owners are chosen by rendezvous (highest-random-weight) hashing of (partition, node): each
// partition goes to the live node with the highest score. When a node leaves, only its own
// partitions move, each to its next-ranked node; when it comes back it is again the highest for
// exactly those, so they move back, and nothing else moves either time.

/// The two spaces of partitions: boards by campus, and accounts (with personal streams) by user.
public enum PartitionSpace: String, Sendable, Hashable, Comparable, CaseIterable {
    case boards
    case accounts

    public static func < (lhs: PartitionSpace, rhs: PartitionSpace) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One partition: the unit of ownership, journaling, snapshotting and failover.
public struct PartitionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let space: PartitionSpace
    public let index: Int

    public init(space: PartitionSpace, index: Int) {
        self.space = space
        self.index = index
    }

    /// `p<n>` for a board partition, `a<n>` for an account partition: the lease key and the suffix
    /// of the partition's subjects and stream.
    public var description: String { (space == .boards ? "p" : "a") + String(index) }

    public static func < (lhs: PartitionID, rhs: PartitionID) -> Bool {
        (lhs.space, lhs.index) < (rhs.space, rhs.index)
    }
}

/// The fixed partitioning of one deployment and the preferred owner of each partition.
public struct PartitionMap: Sendable, Equatable {
    /// Partitions per space. Fixed for a deployment: changing it re-partitions the journals.
    public let partitionCount: Int

    public init(partitionCount: Int = 64) {
        precondition((1...65_536).contains(partitionCount), "a deployment has 1 to 65,536 partitions per space")
        self.partitionCount = partitionCount
    }

    /// Every partition of both spaces, in a stable order.
    public var allPartitions: [PartitionID] {
        PartitionSpace.allCases.sorted().flatMap { space in
            (0..<partitionCount).map { PartitionID(space: space, index: $0) }
        }
    }

    /// The board partition of `campus`: FNV-1a (32 bits) of its UTF-8 bytes, modulo the count.
    public func partition(ofCampus campus: String) -> PartitionID {
        PartitionID(space: .boards, index: Int(Self.fnv1a32(campus.utf8) % UInt32(partitionCount)))
    }

    /// The account partition of a user id: a partition registers users with ids of its own
    /// residue (BangbangCore's `IDSpace`), and ids from before partitions spread by the modulo.
    public func partition(ofUser user: UInt64) -> PartitionID {
        PartitionID(space: .accounts, index: Int(user % UInt64(partitionCount)))
    }

    /// The account partition that keeps what is keyed by a phone (its codes, their throttles, the
    /// user it belongs to; docs/scale-out.md 7b item 4): FNV-1a (32 bits) of the phone in E.164,
    /// modulo the count.
    public func partition(ofPhone phone: String) -> PartitionID {
        PartitionID(space: .accounts, index: Int(Self.fnv1a32(phone.utf8) % UInt32(partitionCount)))
    }

    /// The board partition of an order, from its id's serial (`OrderID.serial`): a partition's
    /// shards hand out serials of its own residue, as account partitions do user ids.
    public func partition(ofOrderSerial serial: UInt64) -> PartitionID {
        PartitionID(space: .boards, index: Int(serial % UInt64(partitionCount)))
    }

    /// `nodes` from most to least preferred owner of `partition`; the same for every node that
    /// passes the same set, whatever its order.
    public func ranking(of partition: PartitionID, among nodes: some Collection<String>) -> [String] {
        nodes.map { (node: $0, score: Self.score(partition, $0)) }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.node < $1.node }
            .map(\.node)
    }

    /// The node that should own `partition` while `nodes` are live (nil when none is).
    public func preferredOwner(of partition: PartitionID, among nodes: some Collection<String>) -> String? {
        var best: (node: String, score: UInt64)?
        for node in nodes {
            let score = Self.score(partition, node)
            if let current = best, current.score > score || (current.score == score && current.node < node) { continue }
            best = (node, score)
        }
        return best?.node
    }

    /// The preferred owner of every partition while `nodes` are live.
    public func assignment(among nodes: some Collection<String>) -> [PartitionID: String] {
        var owners: [PartitionID: String] = [:]
        for partition in allPartitions {
            if let owner = preferredOwner(of: partition, among: nodes) { owners[partition] = owner }
        }
        return owners
    }

    /// FNV-1a, 32 bits (offset basis 2166136261, prime 16777619).
    public static func fnv1a32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// FNV-1a, 64 bits (offset basis 14695981039346656037, prime 1099511628211).
    static func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 1_099_511_628_211
        }
        return hash
    }

    /// The rendezvous weight of (partition, node). FNV's low bits mix poorly for inputs that differ
    /// only at the end, so the hash goes through a 64-bit finalizer (xor-shift-multiply) first.
    static func score(_ partition: PartitionID, _ node: String) -> UInt64 {
        var hash = fnv1a64("\(partition)|\(node)".utf8)
        hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
        hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
        return hash ^ (hash >> 31)
    }
}
