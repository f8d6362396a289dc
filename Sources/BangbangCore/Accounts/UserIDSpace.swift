// The user ids one account partition hands out (docs/scale-out.md, section 7b, item 4): those
// congruent to the partition's index modulo the number of account partitions, so a user's id
// names the partition of their account and any node routes to it with no lookup, and partitions
// register users side by side with no coordination. One account partition (a single node) hands
// out every id, 1, 2, 3 … as always. The account table places a space's ids by their ordinal,
// so a partition's pages fill as densely as a single node's.

public struct UserIDSpace: Sendable, Hashable, CustomStringConvertible {
    public let partitions: UInt64
    public let partition: UInt64

    /// Every id: one account partition.
    public static let all = UserIDSpace(partitions: 1, partition: 0)

    public init(partitions: Int, partition: Int) {
        precondition((1...65_536).contains(partitions) && (0..<partitions).contains(partition),
                     "a user id space is one of 1 to 65,536 partitions")
        self.partitions = UInt64(partitions)
        self.partition = UInt64(partition)
    }

    /// The space's smallest id (ids start at 1).
    var firstID: UInt64 { partition == 0 ? partitions : partition }

    public func contains(_ user: UserID) -> Bool {
        user.rawValue >= 1 && user.rawValue % partitions == partition
    }

    /// The space's first id at or after `id`: the id the next registration gets when ids below
    /// `id` are taken.
    public func firstID(atLeast id: UInt64) -> UInt64 {
        let start = max(id, firstID)
        let remainder = start % partitions
        return remainder <= partition ? start - remainder + partition : start - remainder + partitions + partition
    }

    /// The place of `user` among the space's ids, from 0; nil for an id outside the space.
    func ordinal(of user: UserID) -> UInt64? {
        contains(user) ? (user.rawValue - firstID) / partitions : nil
    }

    /// The id at `ordinal`.
    func user(ordinal: UInt64) -> UserID { UserID(rawValue: firstID + ordinal * partitions) }

    public var description: String { "ids ≡ \(partition) mod \(partitions)" }
}
