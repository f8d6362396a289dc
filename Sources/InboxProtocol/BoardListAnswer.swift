// A board partition's owner's answer to a node's question "your part of this board listing"
// (`node.board_list`, asked by a node subscribing a watcher to a board that several partitions
// hold, so the node can merge the parts into one listing): for each board asked about, the
// partition's sequence when the listing began (every change at or below it is reflected); how many
// of its open orders match; and its first matches in the listing's order, each with its sort key
// and id (what the node merges the partitions' parts by, without reading the order) and the order
// as a client is sent it (opaque here), and whether more follow. Sans-I/O, no imports, fuzzed with
// the inbox's decoders (`fuzz/inbox-protocol`).
//
// Binary and big-endian, every length checked against what remains before anything is copied:
//   0x00 | boards:u8 | (nameLength:u8 | name | sequence:u64)* | total:u32 | hasMore:u8 |
//   count:u32 | (key:i64 | id:u64 | length:u32 | order)*
// The leading 0 tells it from a JSON refusal. Board names are 1 to 32 bytes of UTF-8 in rising
// order; an order is not empty, and there are no more of them than `total`.

public enum BoardListAnswer {
    public struct Entry: Sendable, Equatable {
        public let key: Int64
        public let id: UInt64
        public let order: [UInt8]

        public init(key: Int64, id: UInt64, order: [UInt8]) {
            self.key = key
            self.id = id
            self.order = order
        }
    }

    public struct Answer: Sendable, Equatable {
        /// Per board name (`bounty`), the partition's sequence when the listing began.
        public var sequences: [String: UInt64]
        /// Open orders of the partition that match, in all.
        public var total: UInt32
        /// More matches follow `entries` in the partition.
        public var hasMore: Bool
        public var entries: [Entry]

        public init(sequences: [String: UInt64], total: UInt32, hasMore: Bool, entries: [Entry]) {
            self.sequences = sequences
            self.total = total
            self.hasMore = hasMore
            self.entries = entries
        }
    }

    static let marker: UInt8 = 0
    static let maxNameBytes = 32

    /// Boards in name order, so one answer has one encoding.
    public static func encode(_ answer: Answer) -> [UInt8] {
        var bytes: [UInt8] = [marker, UInt8(answer.sequences.count)]
        for (name, sequence) in answer.sequences.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
            bytes.append(UInt8(name.utf8.count))
            bytes += name.utf8
            InboxCodec.append(sequence, to: &bytes)
        }
        InboxCodec.append(answer.total, to: &bytes)
        bytes.append(answer.hasMore ? 1 : 0)
        InboxCodec.append(UInt32(answer.entries.count), to: &bytes)
        for entry in answer.entries {
            InboxCodec.append(entry.key, to: &bytes)
            InboxCodec.append(entry.id, to: &bytes)
            InboxCodec.append(UInt32(entry.order.count), to: &bytes)
            bytes += entry.order
        }
        return bytes
    }

    /// The answer in `bytes`, or nil when they are not one.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> Answer? {
        var reader = Reader(bytes: bytes)
        guard (try? reader.byte()) == marker, let boards = try? reader.byte() else { return nil }
        var sequences: [String: UInt64] = [:]
        var previous: ArraySlice<UInt8>?
        for _ in 0..<boards {
            guard let length = try? reader.byte(), (1...maxNameBytes).contains(Int(length)),
                  let name = try? reader.bytes(Int(length)), previous.map({ $0.lexicographicallyPrecedes(name) }) ?? true,
                  let text = String(validating: name, as: UTF8.self), sequences[text] == nil,
                  let sequence = try? reader.integer(UInt64.self) else { return nil }
            sequences[text] = sequence
            previous = name
        }
        // Each entry takes at least 21 bytes: a count beyond what remains is a lie, refused
        // before anything is reserved for it.
        guard let total = try? reader.integer(UInt32.self), let more = try? reader.byte(), more <= 1,
              let count = try? reader.integer(UInt32.self), count <= total, Int(count) <= reader.remaining / 21 else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let key = try? reader.integer(Int64.self), let id = try? reader.integer(UInt64.self),
                  let length = try? reader.integer(UInt32.self), length > 0,
                  let order = try? reader.bytes(Int(length)) else { return nil }
            entries.append(Entry(key: key, id: id, order: Array(order)))
        }
        return reader.remaining == 0 ? Answer(sequences: sequences, total: total, hasMore: more == 1, entries: entries) : nil
    }
}
