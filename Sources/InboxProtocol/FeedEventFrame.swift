// One board change as a board partition's owner publishes it on the feed subjects
// (`bb.feed.p<n>.<type>`, published once so every node watching the board gets it): the partition,
// its own number for the change of that board (the partition sequence, a function of its journal),
// and the order before and after the change, each in the storage's encoding (opaque here). A node
// needs both states to tell each watcher filter whether the order enters, changes in or leaves its
// view; it numbers what it forwards itself (FeedSequencer) and frames it once for all its watchers.
// Sans-I/O, no imports, fuzzed with the inbox's decoders (`fuzz/inbox-protocol`).
//
// Binary and big-endian:  partition:u16 | sequence:u64 | beforeLength:u32 | before | after
// `before` is empty for a new order; the sequence is at least 1 and `after` is not empty.

public enum FeedEventFrame {
    public struct Event: Sendable, Equatable {
        public let partition: UInt16
        public let sequence: UInt64
        /// Empty when the change created the order.
        public let before: ArraySlice<UInt8>
        public let after: ArraySlice<UInt8>

        public init(partition: UInt16, sequence: UInt64, before: ArraySlice<UInt8>, after: ArraySlice<UInt8>) {
            self.partition = partition
            self.sequence = sequence
            self.before = before
            self.after = after
        }
    }

    static let headerSize = 14

    public static func encode(partition: UInt16, sequence: UInt64, before: [UInt8]?, after: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        let before = before ?? []
        bytes.reserveCapacity(headerSize + before.count + after.count)
        InboxCodec.append(partition, to: &bytes)
        InboxCodec.append(sequence, to: &bytes)
        InboxCodec.append(UInt32(before.count), to: &bytes)
        bytes += before
        bytes += after
        return bytes
    }

    /// The change in `bytes` (its orders slices of them, not copies), or nil when they are not one.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> Event? {
        var reader = Reader(bytes: bytes)
        guard let partition = try? reader.integer(UInt16.self), let sequence = try? reader.integer(UInt64.self), sequence >= 1,
              let beforeLength = try? reader.integer(UInt32.self), let before = try? reader.bytes(Int(beforeLength)),
              reader.remaining > 0 else { return nil }
        return Event(partition: partition, sequence: sequence, before: before, after: reader.bytes)
    }
}
