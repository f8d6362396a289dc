// A source's side of the inbox: it turns each durable record's personal events into entries, one
// per account partition (more when they would not fit one publish), numbers them per partition,
// and says what to publish, and what to publish again.
//
// Entries wait in a window per partition until delivered. `publishes` groups every entry not yet
// sent into as few messages as fit (a burst of records costs a few publishes, not one each).
// Publishes are pipelined, and the stream may store a later message while an earlier one is lost
// (a stream leader that dies with the earlier one in flight); the reader then drops the later
// entries as arriving after a gap. So one failed publish to a partition makes *every* entry to it
// not yet delivered unsent again, acknowledged or not, as a new attempt; answers to an earlier
// attempt are ignored from then on. An entry counts as delivered once it and every entry to the
// same partition before it were acknowledged within one attempt: one connection's publishes
// reach a stream in the order sent, so such a run is stored in order.
//
// What is not yet delivered is part of the source's snapshot (`State`): a node that takes the
// source over publishes it again, then the entries of the records it replays after the snapshot,
// which get the same numbers they got before (the numbering is a function of the journal). The
// reader drops the copies, however they are grouped into messages.

public struct InboxOutbox: Sendable {
    /// One publish to make: `message` to the inbox of account partition `destination`.
    public struct Publish: Hashable, Sendable {
        public let destination: UInt16
        /// Which attempt of the destination this publish belongs to; answers carry it back.
        public let attempt: UInt64
        public let message: InboxMessage
    }

    /// What a snapshot keeps of an outbox: per account partition, the next number and the
    /// entries not yet delivered, in order.
    public struct State: Hashable, Sendable {
        public struct Destination: Hashable, Sendable {
            public var nextSequence: UInt64
            public var pending: [InboxEntry]

            public init(nextSequence: UInt64, pending: [InboxEntry]) {
                self.nextSequence = nextSequence
                self.pending = pending
            }
        }

        public var destinations: [UInt16: Destination]

        public init(destinations: [UInt16: Destination] = [:]) { self.destinations = destinations }
    }

    private struct Slot {
        var entry: InboxEntry
        var isSent = false
        var isAcknowledged = false
    }

    private struct Destination {
        var nextSequence: UInt64 = 1
        /// Not yet delivered, oldest first, from `start` on (a head index, so that delivering one
        /// entry does not move every other). The unsent ones are always the last.
        var window: [Slot] = []
        var start = 0
        var firstUnsent = 0
        var attempt: UInt64 = 0

        var pendingCount: Int { window.count - start }

        mutating func dropDelivered() {
            while start < window.count, window[start].isAcknowledged { start += 1 }
            if start == window.count {
                window.removeAll(keepingCapacity: true)
                (start, firstUnsent) = (0, 0)
            } else if start > 64, start * 2 > window.count {
                window.removeFirst(start)
                firstUnsent -= start
                start = 0
            }
        }
    }

    public let source: InboxSource
    /// A partition's state is taken out to be changed and put back, never changed as a copy
    /// while the dictionary still holds it: that would copy its whole window on every change.
    private var destinations: [UInt16: Destination] = [:]

    public init(source: InboxSource) {
        self.source = source
    }

    /// An outbox restored from a snapshot: everything it holds is unsent, so `publishes` gives it first.
    public init(source: InboxSource, state: State) {
        self.source = source
        for (index, kept) in state.destinations {
            destinations[index] = Destination(nextSequence: kept.nextSequence, window: kept.pending.map { Slot(entry: $0) })
        }
    }

    public var state: State {
        State(destinations: destinations.mapValues {
            State.Destination(nextSequence: $0.nextSequence, pending: $0.window[$0.start...].map(\.entry))
        })
    }

    /// Entries not yet delivered, over every partition.
    public var pendingCount: Int { destinations.values.reduce(0) { $0 + $1.pendingCount } }

    /// The personal events of durable record `journalSequence`, whose change happened `at`,
    /// grouped by account partition. Call in journal order; `publishes` then sends them.
    public mutating func add(journalSequence: UInt64, at: Int64,
                             eventsByDestination: [(destination: UInt16, events: [InboxEvent])]) {
        for (index, events) in eventsByDestination where !events.isEmpty {
            var destination = destinations.removeValue(forKey: index) ?? Destination()
            for chunk in Self.chunks(of: events) {
                destination.window.append(Slot(entry: InboxEntry(outboxSequence: destination.nextSequence,
                                                                 journalSequence: journalSequence, at: at, events: chunk)))
                destination.nextSequence += 1
            }
            destinations[index] = destination
        }
    }

    /// Every entry not yet sent, in as few messages as fit, partitions in `paused` left for
    /// later; the entries count as sent from now.
    public mutating func publishes(excluding paused: Set<UInt16> = []) -> [Publish] {
        var publishes: [Publish] = []
        for index in destinations.keys.sorted() where !paused.contains(index) {
            guard var destination = destinations.removeValue(forKey: index) else { continue }
            defer { destinations[index] = destination }
            guard destination.firstUnsent < destination.window.count else { continue }
            var run: [InboxEntry] = []
            var size = InboxCodec.headerSize
            for position in destination.firstUnsent..<destination.window.count {
                let entry = destination.window[position].entry
                let entrySize = InboxCodec.size(of: entry)
                if !run.isEmpty, size + entrySize > InboxCodec.maxMessageBytes || run.count == InboxCodec.maxEntries {
                    publishes.append(Publish(destination: index, attempt: destination.attempt,
                                             message: InboxMessage(source: source, entries: run)))
                    run = []
                    size = InboxCodec.headerSize
                }
                run.append(entry)
                size += entrySize
                destination.window[position].isSent = true
            }
            publishes.append(Publish(destination: index, attempt: destination.attempt, message: InboxMessage(source: source, entries: run)))
            destination.firstUnsent = destination.window.count
        }
        return publishes
    }

    /// The stream stored `publish`.
    public mutating func acknowledged(_ publish: Publish) {
        guard var destination = destinations.removeValue(forKey: publish.destination) else { return }
        defer { destinations[publish.destination] = destination }
        guard destination.attempt == publish.attempt, destination.start < destination.window.count else { return }
        let first = destination.window[destination.start].entry.outboxSequence
        for entry in publish.message.entries where entry.outboxSequence >= first {
            let position = destination.start + Int(entry.outboxSequence - first)
            guard position < destination.firstUnsent else { break }
            destination.window[position].isAcknowledged = true
        }
        destination.dropDelivered()
    }

    /// `publish` failed or its answer never came: every entry to its partition not yet delivered
    /// is unsent again, as a new attempt (answers to the failed one change nothing from now).
    /// Returns whether anything is to be sent again; `publishes` sends it.
    public mutating func failed(_ publish: Publish) -> Bool {
        guard var destination = destinations.removeValue(forKey: publish.destination) else { return false }
        defer { destinations[publish.destination] = destination }
        guard destination.attempt == publish.attempt, destination.pendingCount > 0 else { return false }
        destination.attempt += 1
        for position in destination.start..<destination.window.count {
            destination.window[position].isSent = false
            destination.window[position].isAcknowledged = false
        }
        destination.firstUnsent = destination.start
        return true
    }

    /// `events` in runs that each fit one message as its only entry.
    static func chunks(of events: [InboxEvent]) -> [[InboxEvent]] {
        let room = InboxCodec.maxMessageBytes - InboxCodec.headerSize - InboxCodec.entryHeaderSize
        var chunks: [[InboxEvent]] = []
        var current: [InboxEvent] = []
        var size = 0
        for event in events {
            let eventSize = InboxCodec.size(of: event)
            precondition(eventSize <= room, "a personal event larger than one inbox message")
            if !current.isEmpty, size + eventSize > room || current.count == InboxCodec.maxEvents {
                chunks.append(current)
                current = []
                size = 0
            }
            current.append(event)
            size += eventSize
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }
}
