import Testing
import TestSupport
@testable import BangbangCore

@Suite struct OrderIDSetTests {
    private static func id(_ serial: UInt64, shard: Int = 3) -> OrderID { OrderID(shard: shard, serial: serial) }

    /// Random inserts and removals, in a window that moves forward the way a board's does and
    /// with stragglers far behind it, checked against a hash set after every step.
    @Test func behavesLikeAHashSet() {
        var random = SeededGenerator(seed: 99)
        var bits = OrderIDSet(shard: 3)
        var reference: Set<OrderID> = []
        var newest: UInt64 = 1
        for step in 0..<20_000 {
            let roll = random.next() % 10
            let serial: UInt64
            if roll < 5 {
                newest += 1 + random.next() % 3
                serial = newest
            } else if roll < 9, let member = reference.randomElement(using: &random) {
                serial = member.serial
            } else {
                serial = random.next() % (newest + 1)
            }
            if roll < 5 || roll == 9, random.next() % 4 != 0 {
                bits.insert(Self.id(serial))
                reference.insert(Self.id(serial))
            } else {
                bits.remove(Self.id(serial))
                reference.remove(Self.id(serial))
            }
            #expect(bits.count == reference.count, "step \(step)")
            #expect(bits.contains(Self.id(serial)) == reference.contains(Self.id(serial)), "step \(step)")
            if step % 97 == 0 {
                #expect(Array(bits) == reference.sorted(), "step \(step)")
            }
        }
        #expect(Array(bits) == reference.sorted())
    }

    /// A board partition's serials (every 64th, from 5): the same behaviour against a hash set,
    /// in as few words as one partition's consecutive serials take; a serial of another
    /// partition is never a member.
    @Test func aPartitionsSerialsAreKeptAsDenselyAsConsecutiveOnes() {
        let serials = IDSpace(partitions: 64, partition: 5)
        var random = SeededGenerator(seed: 7)
        var bits = OrderIDSet(shard: 2, serials: serials)
        var dense = OrderIDSet(shard: 2)
        var reference: Set<OrderID> = []
        for step in 0..<5_000 {
            let ordinal = UInt64(step / 2) + random.next() % 200
            let id = Self.id(5 + 64 * ordinal, shard: 2)
            if random.next() % 3 == 0 {
                bits.remove(id)
                dense.remove(Self.id(ordinal + 1, shard: 2))
                reference.remove(id)
            } else {
                bits.insert(id)
                dense.insert(Self.id(ordinal + 1, shard: 2))
                reference.insert(id)
            }
            #expect(bits.contains(id) == reference.contains(id) && bits.count == reference.count, "step \(step)")
            #expect(!bits.contains(Self.id(6 + 64 * ordinal, shard: 2)))
        }
        #expect(Array(bits) == reference.sorted())
        #expect(Array(bits).map { ($0.serial - 5) / 64 + 1 } == Array(dense).map(\.serial))
        #expect(bits.wordCount == dense.wordCount, "\(bits.wordCount) words against \(dense.wordCount)")
    }

    /// A window of 300 orders sliding over 100,000 serials: the words left behind are given
    /// back, and an old serial can still come back below the window.
    @Test func aSlidingWindowKeepsItsMembers() {
        var set = OrderIDSet(shard: 1)
        for serial in 1...100_000 as ClosedRange<UInt64> {
            set.insert(Self.id(serial, shard: 1))
            if serial > 300 { set.remove(Self.id(serial - 300, shard: 1)) }
        }
        #expect(set.count == 300)
        #expect(Array(set).map(\.serial) == Array(99_701...100_000))
        set.insert(Self.id(9, shard: 1))
        #expect(set.count == 301)
        #expect(Array(set).map(\.serial) == [9] + Array(99_701...100_000))
        set.remove(Self.id(9, shard: 1))
        #expect(Array(set).first?.serial == 99_701)
    }

    @Test func anEmptiedSetStartsAfresh() {
        var set = OrderIDSet(shard: 0)
        for serial in [700, 5, 64, 63, 6_400] as [UInt64] { set.insert(Self.id(serial, shard: 0)) }
        #expect(Array(set).map(\.serial) == [5, 63, 64, 700, 6_400])
        for serial in [700, 5, 64, 63, 6_400] as [UInt64] { set.remove(Self.id(serial, shard: 0)) }
        #expect(set.isEmpty)
        #expect(Array(set).isEmpty)
        set.insert(Self.id(1, shard: 0))
        #expect(Array(set).map(\.serial) == [1])
        #expect(!set.contains(Self.id(1, shard: 1)))
    }

    /// Equal members make equal sets, whatever order they came in and whatever was removed.
    @Test func equalityIsByMembers() {
        var a = OrderIDSet(shard: 2), b = OrderIDSet(shard: 2)
        for serial in 1...300 as ClosedRange<UInt64> { a.insert(Self.id(serial, shard: 2)) }
        for serial in 1...200 as ClosedRange<UInt64> { a.remove(Self.id(serial, shard: 2)) }
        for serial in (201...300 as ClosedRange<UInt64>).reversed() { b.insert(Self.id(serial, shard: 2)) }
        #expect(a == b)
        b.remove(Self.id(250, shard: 2))
        #expect(a != b)
        b.insert(Self.id(250, shard: 2))
        b.insert(Self.id(7, shard: 2))
        #expect(a != b)
    }
}
