// OrderIDSet: a set of one shard's order ids, kept as bits indexed by serial.
//
// A shard hands out serials in order, so the orders it holds lie in a window of serials that
// moves forward as orders are published and leave. The set keeps one bit per serial of that
// window: inserting the newest order sets a bit in the same word as the order before it, where a
// hash set wrote to a random slot of a table as large as the board (a cache miss per insert, and
// every member rehashed each time the table grew). Words below the lowest member are skipped
// through `head` and given back once they are half the array, so removing from the front costs
// O(1) amortized and the array stays about as long as the window. Members iterate in ascending
// order, by id.

/// A set of the order ids of one shard (`shard`); ids of other shards are a caller's mistake.
struct OrderIDSet: Sendable {
    let shard: Int
    /// Bit `s % 64` of `words[head + s / 64 - firstWord]` is set when serial `s` is a member.
    /// `words[head]` is nonzero unless the set is empty; the words before it are unused.
    private var words: [UInt64] = []
    private var head = 0
    /// The serial word (`serial / 64`) that `words[head]` holds.
    private var firstWord = 0
    private(set) var count = 0

    init(shard: Int) {
        self.shard = shard
    }

    var isEmpty: Bool { count == 0 }

    func contains(_ id: OrderID) -> Bool {
        guard id.shard == shard, let index = index(ofWord: Self.word(of: id)) else { return false }
        return words[index] & Self.bit(of: id) != 0
    }

    mutating func insert(_ id: OrderID) {
        precondition(id.shard == shard, "OrderIDSet: order \(id) is not in shard \(shard)")
        let word = Self.word(of: id)
        if count == 0 {
            words.removeAll(keepingCapacity: true)
            words.append(0)
            head = 0
            firstWord = word
        } else if word < firstWord {
            // An older serial than every member (a snapshot's orders arrive in any order).
            let missing = firstWord - word
            if missing <= head {
                head -= missing
            } else {
                words.insert(contentsOf: repeatElement(0, count: missing - head), at: 0)
                head = 0
            }
            firstWord = word
        } else if head + word - firstWord >= words.count {
            words.append(contentsOf: repeatElement(0, count: head + word - firstWord - words.count + 1))
        }
        let index = head + word - firstWord
        let bit = Self.bit(of: id)
        if words[index] & bit == 0 {
            words[index] |= bit
            count += 1
        }
    }

    mutating func remove(_ id: OrderID) {
        guard id.shard == shard, let index = index(ofWord: Self.word(of: id)) else { return }
        let bit = Self.bit(of: id)
        guard words[index] & bit != 0 else { return }
        words[index] &= ~bit
        count -= 1
        if count == 0 {
            words.removeAll(keepingCapacity: true)
            head = 0
            firstWord = 0
        } else if index == head, words[head] == 0 {
            let next = words[head...].firstIndex { $0 != 0 }!
            firstWord += next - head
            head = next
            if head >= 64, head * 2 >= words.count {
                words.removeFirst(head)
                head = 0
            }
        }
    }

    private func index(ofWord word: Int) -> Int? {
        guard count > 0, word >= firstWord, head + word - firstWord < words.count else { return nil }
        return head + word - firstWord
    }

    private static func word(of id: OrderID) -> Int { Int(id.serial >> 6) }
    private static func bit(of id: OrderID) -> UInt64 { 1 << (id.serial & 63) }
}

extension OrderIDSet: Sequence {
    struct Iterator: IteratorProtocol {
        fileprivate let set: OrderIDSet
        fileprivate var index: Int
        fileprivate var remaining: UInt64

        mutating func next() -> OrderID? {
            while remaining == 0 {
                index += 1
                guard index < set.words.count else { return nil }
                remaining = set.words[index]
            }
            let bit = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            let serial = UInt64(set.firstWord + index - set.head) << 6 | UInt64(bit)
            return OrderID(shard: set.shard, serial: serial)
        }
    }

    func makeIterator() -> Iterator {
        Iterator(set: self, index: head, remaining: count == 0 ? 0 : words[head])
    }

    var underestimatedCount: Int { count }
}

extension OrderIDSet: Equatable {
    /// The same members (however the words are laid out).
    static func == (lhs: OrderIDSet, rhs: OrderIDSet) -> Bool {
        lhs.shard == rhs.shard && lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }
}
