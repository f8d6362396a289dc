// Where a campus's boards and a user's account live when several nodes share the work. Boards
// go by campus because nearly every interaction (the feed, accepts, progress) stays within one
// campus, and so with one owner; accounts go by user, so one owner numbers each personal stream.
//
// Pure arithmetic with no I/O and no shared state: every node computes the same partition and the
// same preferred owner from the same inputs, so a request is routed without a lookup and nodes
// agree on who should own what without talking. The hashes are fixed here (FNV-1a, not Swift's
// per-process seeded `Hasher`) because their results are part of the on-disk and on-the-wire
// layout: a journal stream is named after its partition.
//
// Owners are placed by rendezvous (highest-random-weight) hashing of (partition, node), spread
// evenly: every live node is given ⌊P/N⌋ or ⌈P/N⌉ of the P partitions, each going to the node that
// weighs it highest among those with room. The placement is a function of the set of live nodes
// alone, so when a node comes back every partition returns to where it was before it left. When a
// node leaves, its own partitions move and, for the shares to stay even, a few others (with 64
// partitions, at most six for up to eight nodes); plain rendezvous moves none of those but leaves
// one node owning twice another's share as often as not, with the few pairs a deployment has.

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
    /// user it belongs to): a login names a phone, not a user, and a phone belongs to one account
    /// at most across every partition, so the phone needs one home of its own. FNV-1a (32 bits)
    /// of the phone in E.164, modulo the count.
    public func partition(ofPhone phone: String) -> PartitionID {
        PartitionID(space: .accounts, index: Int(Self.fnv1a32(phone.utf8) % UInt32(partitionCount)))
    }

    /// The board partition of an order, from its id's serial (`OrderID.serial`): a partition's
    /// shards hand out serials of its own residue, as account partitions do user ids.
    public func partition(ofOrderSerial serial: UInt64) -> PartitionID {
        PartitionID(space: .boards, index: Int(serial % UInt64(partitionCount)))
    }

    /// `nodes` from the highest rendezvous weight for `partition` to the lowest; the same for every
    /// node that passes the same set, whatever its order.
    public func ranking(of partition: PartitionID, among nodes: some Collection<String>) -> [String] {
        nodes.map { (node: $0, score: Self.score(partition, $0)) }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.node < $1.node }
            .map(\.node)
    }

    /// Where each of `partitions` should be while `nodes` are live: every node is given ⌊P/N⌋ or
    /// ⌈P/N⌉ of them, and no more than P mod N nodes the larger share. (partition, node) weights
    /// are taken from the highest down, and each gives its partition to its node unless the
    /// partition is placed already or the node has no room left. Empty when no node is live; the
    /// same for every node that passes the same sets, whatever their order.
    public func placement(of partitions: some Collection<PartitionID>, among nodes: some Collection<String>) -> [PartitionID: String] {
        let nodes = Set(nodes).sorted()
        let partitions = Set(partitions).sorted()
        guard !nodes.isEmpty else { return [:] }
        var weights: [(score: UInt64, partition: Int, node: Int)] = []
        weights.reserveCapacity(partitions.count * nodes.count)
        for (partitionIndex, partition) in partitions.enumerated() {
            for (nodeIndex, node) in nodes.enumerated() {
                weights.append((Self.score(partition, node), partitionIndex, nodeIndex))
            }
        }
        weights.sort { ($0.score, $1.partition, $1.node) > ($1.score, $0.partition, $0.node) }
        let (share, remainder) = partitions.count.quotientAndRemainder(dividingBy: nodes.count)
        var owners: [PartitionID: String] = [:]
        var counts = [Int](repeating: 0, count: nodes.count)
        var nodesAboveShare = 0
        for weight in weights where owners[partitions[weight.partition]] == nil {
            let count = counts[weight.node]
            if count > share || (count == share && nodesAboveShare == remainder) { continue }
            if count == share { nodesAboveShare += 1 }
            counts[weight.node] += 1
            owners[partitions[weight.partition]] = nodes[weight.node]
            if owners.count == partitions.count { break }
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
