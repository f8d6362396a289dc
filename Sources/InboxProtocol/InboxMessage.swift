// The inbox of an account partition: how personal events cross from the partition whose owner
// committed a change to the partition that numbers its users' personal streams, so that each stream
// is numbered once, gap-free and the same after any failover, by one owner. The inbox's order is
// the numbering. The design is in docs/scale-out.md. This module is the part without I/O: the
// message a source publishes, its wire form, the source's outbox (what to publish, what to publish
// again after a failure) and the reader's rule (which message to apply, which to drop). The NATS
// stream that carries the messages is `Cluster`'s `PartitionInbox`.
//
// A message is every personal event one journal record of one source tells the users of one
// account partition. Each source numbers its messages to each account partition 1, 2, 3 … (the
// outbox sequence) in journal order, and the reader applies a source's message only when it is
// the next of that source's numbering: an earlier number is a copy published again, a later one
// arrived after a gap and will be published again in order. That is what keeps every personal
// stream gap-free and numbered once whatever was lost, doubled or reordered on the way.

/// The partition a message comes from: a board partition (`p<n>`), whose changes to orders tell
/// publishers and runners, or an account partition (`a<n>`), whose own events (a login, a
/// verification decided) go through its inbox the same way.
public struct InboxSource: Hashable, Comparable, Sendable, CustomStringConvertible {
    public enum Space: UInt8, Sendable, Comparable {
        case boards = 1
        case accounts = 2

        public static func < (lhs: Space, rhs: Space) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public let space: Space
    public let index: UInt16

    public init(space: Space, index: UInt16) {
        self.space = space
        self.index = index
    }

    public var description: String { (space == .boards ? "p" : "a") + String(index) }

    public static func < (lhs: InboxSource, rhs: InboxSource) -> Bool {
        (lhs.space, lhs.index) < (rhs.space, rhs.index)
    }
}

/// One personal event for one user: its name (`order.changed`, `account.login`, …) and its
/// `data`, encoded by the source once for this recipient.
public struct InboxEvent: Hashable, Sendable {
    public let user: UInt64
    public let name: String
    public let data: [UInt8]

    public init(user: UInt64, name: String, data: [UInt8]) {
        self.user = user
        self.name = name
        self.data = data
    }
}

/// What one journal record of a source tells the users of one account partition: the unit the
/// outbox numbers and the reader applies or drops. (A record whose events for one partition
/// would not fit one publish is several entries, each numbered.)
public struct InboxEntry: Hashable, Sendable {
    /// 1, 2, 3 … per (source, account partition), in the source's journal order.
    public let outboxSequence: UInt64
    /// The source's journal record the events come from (for the logs and for tests).
    public let journalSequence: UInt64
    /// When the record's change happened (milliseconds since 1970): the personal streams keep
    /// events for a time, and a replay must trim them as the live numbering did.
    public let at: Int64
    /// In the order the record lists them; never empty.
    public let events: [InboxEvent]

    public init(outboxSequence: UInt64, journalSequence: UInt64, at: Int64, events: [InboxEvent]) {
        precondition(outboxSequence > 0, "outbox sequences start at 1")
        precondition(!events.isEmpty, "an inbox entry carries at least one event")
        self.outboxSequence = outboxSequence
        self.journalSequence = journalSequence
        self.at = at
        self.events = events
    }
}

/// One publish: consecutive entries of one source for one account partition. How entries are
/// grouped into messages is the sender's business (whatever was ready in one turn of its loop);
/// numbering and dropping are per entry, so a copy sent grouped differently is still a copy.
public struct InboxMessage: Hashable, Sendable {
    public let source: InboxSource
    /// Never empty; outbox sequences consecutive.
    public let entries: [InboxEntry]

    public init(source: InboxSource, entries: [InboxEntry]) {
        precondition(!entries.isEmpty, "an inbox message carries at least one entry")
        precondition(zip(entries, entries.dropFirst()).allSatisfy { $0.outboxSequence &+ 1 == $1.outboxSequence },
                     "an inbox message's entries are numbered consecutively")
        self.source = source
        self.entries = entries
    }
}

public enum InboxProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    case badMagic
    case unsupportedVersion(UInt8)
    case unknownSpace(UInt8)
    /// The bytes end before the field they announce does.
    case truncated
    case trailingBytes(Int)
    case zeroOutboxSequence
    /// Entries of one message whose outbox sequences do not follow one another.
    case entriesNotConsecutive
    case noEntries
    case noEvents
    case invalidName
    case tooLarge(Int)
    /// A stored outbox or reader state that breaks its own rules (keys out of order, numbering
    /// with holes, another source's messages).
    case inconsistentState

    public var description: String {
        switch self {
        case .badMagic: "not an inbox message"
        case .unsupportedVersion(let version): "inbox message version \(version) is not supported"
        case .unknownSpace(let space): "unknown partition space \(space)"
        case .truncated: "inbox message truncated"
        case .trailingBytes(let count): "\(count) bytes after the inbox message"
        case .zeroOutboxSequence: "outbox sequence 0"
        case .entriesNotConsecutive: "inbox entries not numbered consecutively"
        case .noEntries: "inbox message without entries"
        case .noEvents: "inbox entry without events"
        case .invalidName: "event name empty, too long or not UTF-8"
        case .tooLarge(let size): "inbox message of \(size) bytes exceeds the limit"
        case .inconsistentState: "stored inbox state is inconsistent"
        }
    }
}
