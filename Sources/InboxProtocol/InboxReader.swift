// The account partition's side of the inbox: which entries to apply. The inbox stream is read
// in its order, and that order is the numbering of personal events: an entry applied here gives
// each of its events the next number of its user, so replaying the stream from a snapshot's
// position gives the same numbers again. The rule depends on nothing but the stream's contents
// and the state, so every node that reads the same stream decides the same.
//
// A source's entry is applied when its outbox sequence is the next after the last applied from
// that source. An earlier one is a copy (a source that published again after a failure, or a node
// that took the source over); a later one came after a gap, and its source publishes it again
// after the missing one (InboxOutbox.swift).

public struct InboxReader: Sendable {
    /// What a snapshot keeps of the reader: how far the stream was read, and per source the last
    /// outbox sequence applied.
    public struct State: Hashable, Sendable {
        public var position: UInt64
        public var applied: [InboxSource: UInt64]

        public init(position: UInt64 = 0, applied: [InboxSource: UInt64] = [:]) {
            self.position = position
            self.applied = applied
        }
    }

    /// What reading one message decided, entry by entry. The entries of a message are numbered
    /// consecutively, so they fall into three runs, in this order: copies of entries applied
    /// before, entries to apply, and entries after a gap.
    public struct Outcome: Hashable, Sendable {
        /// Copies of entries applied before.
        public var duplicates: Int
        /// The positions, in the message's `entries`, of those to apply: give each of their
        /// events the next number of its user.
        public var applied: Range<Int>
        /// Entries after a gap in their source's numbering; the source sends them again in order.
        public var outOfOrder: Int

        public init(duplicates: Int, applied: Range<Int>, outOfOrder: Int) {
            self.duplicates = duplicates
            self.applied = applied
            self.outOfOrder = outOfOrder
        }
    }

    public private(set) var state: State

    public init(state: State = State()) { self.state = state }

    /// Reads the message stored at `streamSequence`: the stream's messages must be passed in
    /// order. Nil for a sequence at or before the position (nothing changes).
    public mutating func read(_ message: InboxMessage, at streamSequence: UInt64) -> Outcome? {
        guard streamSequence > state.position else { return nil }
        state.position = streamSequence
        let last = state.applied[message.source] ?? 0
        let entries = message.entries
        let duplicates = entries.prefix { $0.outboxSequence <= last }.count
        guard duplicates < entries.count else {
            return Outcome(duplicates: duplicates, applied: duplicates..<duplicates, outOfOrder: 0)
        }
        guard entries[duplicates].outboxSequence == last + 1 else {
            return Outcome(duplicates: duplicates, applied: duplicates..<duplicates, outOfOrder: entries.count - duplicates)
        }
        state.applied[message.source] = entries[entries.count - 1].outboxSequence
        return Outcome(duplicates: duplicates, applied: duplicates..<entries.count, outOfOrder: 0)
    }

    /// A message at `streamSequence` that could not be decoded: the position moves past it.
    public mutating func skipUnreadable(at streamSequence: UInt64) {
        state.position = max(state.position, streamSequence)
    }
}
