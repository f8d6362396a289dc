// A node's numbering of one board's feed when the board's changes come from many partitions. Pure
// state, no I/O: the node's feed subscriber hands it each event it receives on
// `bb.feed.p<n>.<type>` and gets the `seq` to send, and each `board.subscribe` of a local
// connection goes through a `FeedSubscription`.
//
// The protocol promises one increasing `seq` per board, and that a `board.subscribe` reply's
// `seq` marks what its list already reflects. Each partition numbers its own changes of a board
// (the partition sequence, a function of its journal, so a new owner goes on where the old one
// stopped); a node numbers what it forwards, in the order it receives it. A subscription takes the
// node's position when it starts, asks every partition for its list and its partition sequence,
// and holds the events that arrive meanwhile: those a partition's list already reflected (at or
// below its partition sequence) are dropped for this subscriber, the rest follow the reply. The
// client cannot tell that the numbering is the node's.
//
// Core NATS delivers at most once. A partition sequence that skips is a lost change nobody can
// replay: the sequencer says so (`gap`), and the node closes that board's watchers with 1012 so
// they reconnect and subscribe again, which the protocol already asks of them.

public struct FeedSequencer: Sendable {
    public enum Decision: Hashable, Sendable {
        /// Send it to the board's watchers as `seq`.
        case forward(sequence: UInt64)
        /// At or below what was received from its partition before: a copy, or older than a list.
        case stale
        /// Changes of `partition` between `expected` and the event's were lost.
        case gap(partition: UInt16, expected: UInt64, received: UInt64)
    }

    /// The board's position on this node: the `seq` of the last event forwarded.
    public private(set) var sequence: UInt64 = 0
    /// Per partition, the partition sequence last received (or learned from a list).
    private var received: [UInt16: UInt64] = [:]

    public init() {}

    /// An event of `partition` numbered `partitionSequence` by it.
    public mutating func receive(from partition: UInt16, partitionSequence: UInt64) -> Decision {
        if let last = received[partition] {
            if partitionSequence <= last { return .stale }
            if partitionSequence > last + 1 {
                received[partition] = partitionSequence
                return .gap(partition: partition, expected: last + 1, received: partitionSequence)
            }
        }
        received[partition] = partitionSequence
        sequence += 1
        return .forward(sequence: sequence)
    }

    /// The node stopped listening to the board (its last watcher left): what it received of each
    /// partition says nothing about what it will receive when it listens again, so no change is
    /// taken for lost then. Its own numbering goes on from where it was, never back.
    public mutating func stopListening() {
        received.removeAll()
    }

    /// A partition answered a subscription's list at `partitionSequence`: from then on the node
    /// knows where that partition's numbering stands, so it can tell a lost event from a first one.
    public mutating func learn(partition: UInt16, listedThrough partitionSequence: UInt64) {
        if received[partition] == nil { received[partition] = partitionSequence }
    }
}

/// One connection's `board.subscribe` for one board, from the moment it starts until every
/// partition's list is in and past: what the connection is sent of the events received meanwhile.
public struct FeedSubscription<Event: Sendable>: Sendable {
    /// The `seq` of the reply: the node's position when the subscription started. Every event
    /// forwarded at or below it was received before any list was asked for, so every list
    /// reflects it.
    public let replySequence: UInt64
    /// Per partition, what its list reflects; an event of that partition at or below it is not
    /// sent. A floor is dropped once an event above it has been seen (a partition's events arrive
    /// in order), so a settled subscription filters nothing.
    private var floors: [UInt16: UInt64] = [:]
    private var awaiting: Set<UInt16>
    private var held: [(partition: UInt16, partitionSequence: UInt64, event: Event)] = []

    /// Starts a subscription to a board held by `partitions`, at the node's position `sequence`.
    public init(partitions: some Sequence<UInt16>, at sequence: UInt64) {
        replySequence = sequence
        awaiting = Set(partitions)
    }

    /// Whether every partition's list is in (the reply can be sent).
    public var isReady: Bool { awaiting.isEmpty }

    /// Whether it passes every event on, unchanged by them: every list is in and every partition
    /// has been seen past what its list reflects.
    public var isSettled: Bool { awaiting.isEmpty && floors.isEmpty }

    /// `partition`'s list reflects its changes through `partitionSequence`. Once every list is
    /// in, returns the held events to send after the reply, in the order received.
    public mutating func listed(partition: UInt16, through partitionSequence: UInt64) -> [Event] {
        guard awaiting.remove(partition) != nil else { return [] }
        floors[partition] = partitionSequence
        guard awaiting.isEmpty else { return [] }
        let events = held
        held = []
        return events.compactMap { admits($0.partition, $0.partitionSequence) ? $0.event : nil }
    }

    /// An event forwarded by the node: whether to send it to this connection now. Before every
    /// list is in, it is held (and `false` is returned).
    public mutating func receive(_ event: Event, from partition: UInt16, partitionSequence: UInt64) -> Bool {
        guard awaiting.isEmpty else {
            held.append((partition, partitionSequence, event))
            return false
        }
        return admits(partition, partitionSequence)
    }

    private mutating func admits(_ partition: UInt16, _ partitionSequence: UInt64) -> Bool {
        guard let floor = floors[partition] else { return true }
        if partitionSequence <= floor { return false }
        floors[partition] = nil
        return true
    }
}
