// OrderIDSet: a set of one shard's order ids, kept as bits indexed by serial.
//
// A shard hands out serials in order (every serial on one board partition, every P-th with
// many: its `IDSpace`), so the orders it holds lie in a window of serials that moves forward as
// orders are published and leave. The set keeps one bit per serial of that window, by the
// serial's ordinal in the space: inserting the newest order sets a bit in the same word as the order before it, where a
// hash set wrote to a random slot of a table as large as the board (a cache miss per insert, and
// every member rehashed each time the table grew). Words below the lowest member are skipped
// through `head` and given back once they are half the array, so removing from the front costs
// O(1) amortized and the array stays about as long as the window. Members iterate in ascending
// order, by id.

/// A set of the order ids of one shard (`shard`) whose serials are of `serials`; other ids are a
/// caller's mistake.
struct OrderIDSet: Sendable {
    let shard: Int
    let serials: IDSpace
    /// Bit `k % 64` of `words[head + k / 64 - firstWord]` is set when the serial of ordinal `k` is
    /// a member. `words[head]` is nonzero unless the set is empty; the words before it are unused.
    private var words: [UInt64] = []
    private var head = 0
    /// The ordinal word (`ordinal / 64`) that `words[head]` holds.
    private var firstWord = 0
    private(set) var count = 0

    init(shard: Int, serials: IDSpace = .all) {
        self.shard = shard
        self.serials = serials
    }

    var isEmpty: Bool { count == 0 }

    /// Words of bits held (for tests: how densely the members lie).
    var wordCount: Int { words.count }

    func contains(_ id: OrderID) -> Bool {
        guard id.shard == shard, let ordinal = serials.ordinal(of: id.serial),
              let index = index(ofWord: Self.word(of: ordinal)) else { return false }
        return words[index] & Self.bit(of: ordinal) != 0
    }

    mutating func insert(_ id: OrderID) {
        guard id.shard == shard, let ordinal = serials.ordinal(of: id.serial) else {
            preconditionFailure("OrderIDSet: order \(id) is not in shard \(shard) with \(serials)")
        }
        let word = Self.word(of: ordinal)
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
        let bit = Self.bit(of: ordinal)
        if words[index] & bit == 0 {
            words[index] |= bit
            count += 1
        }
    }

    mutating func remove(_ id: OrderID) {
        guard id.shard == shard, let ordinal = serials.ordinal(of: id.serial),
              let index = index(ofWord: Self.word(of: ordinal)) else { return }
        let bit = Self.bit(of: ordinal)
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

    private static func word(of ordinal: UInt64) -> Int { Int(ordinal >> 6) }
    private static func bit(of ordinal: UInt64) -> UInt64 { 1 << (ordinal & 63) }
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
            let ordinal = UInt64(set.firstWord + index - set.head) << 6 | UInt64(bit)
            return OrderID(shard: set.shard, serial: set.serials.id(ordinal: ordinal))
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
