// The ids one partition hands out: those congruent to the partition's index modulo the number of
// partitions in its space. An account partition gives users such ids and a board partition's shards
// give their orders such serials, so a user's id names their account partition and an order's id
// its board partition: any node routes a request to the owner with no lookup, and partitions hand
// out ids side by side with no coordination. One partition (a single node) hands out every id, 1,
// 2, 3 … as always. The tables indexed by id (the accounts, a shard's bitsets of orders) place a
// space's ids by their ordinal, so a partition's tables are as dense as a single node's.

public struct IDSpace: Sendable, Hashable, CustomStringConvertible {
    public let partitions: UInt64
    public let partition: UInt64

    /// Every id: one partition.
    public static let all = IDSpace(partitions: 1, partition: 0)

    public init(partitions: Int, partition: Int) {
        precondition((1...65_536).contains(partitions) && (0..<partitions).contains(partition),
                     "an id space is one of 1 to 65,536 partitions")
        self.partitions = UInt64(partitions)
        self.partition = UInt64(partition)
    }

    /// Whether `id` is of the space (0 is, for partition 0, though never handed out: a table
    /// keeps room for it, as the tables of one partition always did).
    public func contains(_ id: UInt64) -> Bool {
        id % partitions == partition
    }

    /// The space's first id at or after `id`, never 0: what the next one handed out is when
    /// every id below `id` is taken.
    public func firstID(atLeast id: UInt64) -> UInt64 {
        let start = max(id, 1)
        let remainder = start % partitions
        return remainder <= partition ? start - remainder + partition : start - remainder + partitions + partition
    }

    /// The place of `id` among the space's ids, from 0; nil for an id outside the space.
    @inline(__always)
    func ordinal(of id: UInt64) -> UInt64? {
        if partitions == 1 { return id }
        return contains(id) ? id / partitions : nil
    }

    /// The id at `ordinal`.
    @inline(__always)
    func id(ordinal: UInt64) -> UInt64 { ordinal * partitions + partition }

    public var description: String { "ids ≡ \(partition) mod \(partitions)" }
}
