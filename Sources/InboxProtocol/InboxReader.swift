// The account partition's side of the inbox: which message to apply. The inbox stream is read in
// its order, and that order is the numbering of personal events: a message applied here gives
// each of its events the next number of its user, so replaying the stream from a snapshot's
// position gives the same numbers again. The rule depends on nothing but the stream's contents
// and the state, so every node that reads the same stream decides the same.
//
// A source's message is applied when its outbox sequence is the next after the last applied
// from that source. An earlier one is a copy (a source that published again after a failure, or
// a node that took the source over); a later one came after a gap, and its source publishes it
// again after the missing one (InboxOutbox.swift).

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

    public enum Outcome: Hashable, Sendable {
        /// Give each event the next number of its user.
        case apply
        /// A copy of a message applied before.
        case duplicate
        /// From after a gap in its source's numbering; its source sends it again in order.
        case outOfOrder(expected: UInt64)
        /// At or before the position already read.
        case alreadyRead
    }

    public private(set) var state: State

    public init(state: State = State()) { self.state = state }

    /// Reads the message stored at `streamSequence`: the stream's messages must be passed in
    /// order (a sequence at or before the position is answered `alreadyRead` and changes nothing).
    public mutating func read(_ message: InboxMessage, at streamSequence: UInt64) -> Outcome {
        guard streamSequence > state.position else { return .alreadyRead }
        state.position = streamSequence
        return decide(message)
    }

    /// A message at `streamSequence` that could not be decoded: the position moves past it.
    public mutating func skipUnreadable(at streamSequence: UInt64) {
        state.position = max(state.position, streamSequence)
    }

    private mutating func decide(_ message: InboxMessage) -> Outcome {
        let last = state.applied[message.source] ?? 0
        if message.outboxSequence <= last { return .duplicate }
        if message.outboxSequence > last + 1 { return .outOfOrder(expected: last + 1) }
        state.applied[message.source] = message.outboxSequence
        return .apply
    }
}
