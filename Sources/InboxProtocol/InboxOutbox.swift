// A source's side of the inbox: it turns each durable record's personal events into messages,
// one per account partition (more when they would not fit one publish), numbers them per
// partition, and says what to publish, and what to publish again.
//
// Publishes are pipelined, and the stream may store a later message while an earlier one is lost
// (a stream leader that dies with the earlier one in flight); the reader then drops the later one
// as arriving after a gap. So one failed publish to a partition sends again *every* message to it
// not yet acknowledged, and every one after it even if acknowledged, in order, as a new attempt;
// answers to an earlier attempt are ignored from then on. A message counts as delivered once it
// and every message to the same partition before it were acknowledged within one attempt: one
// connection's publishes reach a stream in the order sent, so such a run is stored in order.
//
// What is not yet delivered is part of the source's snapshot (`State`): a node that takes the
// source over publishes it again, then the messages of the records it replays after the
// snapshot, which get the same numbers they got before (the numbering is a function of the
// journal). The reader drops the copies.

public struct InboxOutbox: Sendable {
    /// One publish to make: `message` to the inbox of account partition `destination`.
    public struct Publish: Hashable, Sendable {
        public let destination: UInt16
        /// Which attempt of the destination this publish belongs to; answers carry it back.
        public let attempt: UInt64
        public let message: InboxMessage
    }

    /// What a snapshot keeps of an outbox: per account partition, the next number and the
    /// messages not yet delivered, in order.
    public struct State: Hashable, Sendable {
        public struct Destination: Hashable, Sendable {
            public var nextSequence: UInt64
            public var pending: [InboxMessage]

            public init(nextSequence: UInt64, pending: [InboxMessage]) {
                self.nextSequence = nextSequence
                self.pending = pending
            }
        }

        public var destinations: [UInt16: Destination]

        public init(destinations: [UInt16: Destination] = [:]) { self.destinations = destinations }
    }

    private struct Destination {
        var nextSequence: UInt64 = 1
        /// Sent and not yet delivered, oldest first, from `start` on (a head index, so that
        /// delivering one message does not move every other).
        var window: [(message: InboxMessage, acknowledged: Bool)] = []
        var start = 0
        var attempt: UInt64 = 0

        var pending: ArraySlice<(message: InboxMessage, acknowledged: Bool)> { window[start...] }

        mutating func dropDelivered() {
            while start < window.count, window[start].acknowledged { start += 1 }
            if start == window.count {
                window.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 64, start * 2 > window.count {
                window.removeFirst(start)
                start = 0
            }
        }
    }

    public let source: InboxSource
    private var destinations: [UInt16: Destination] = [:]

    public init(source: InboxSource) {
        self.source = source
    }

    /// An outbox restored from a snapshot; `resendAll()` then gives what to publish first.
    public init(source: InboxSource, state: State) {
        self.source = source
        for (index, kept) in state.destinations {
            precondition(kept.pending.allSatisfy { $0.source == source }, "a snapshot's outbox holds another source's messages")
            destinations[index] = Destination(nextSequence: kept.nextSequence,
                                              window: kept.pending.map { ($0, false) })
        }
    }

    public var state: State {
        State(destinations: destinations.mapValues {
            State.Destination(nextSequence: $0.nextSequence, pending: $0.pending.map(\.message))
        })
    }

    /// Messages sent and not yet delivered, over every partition.
    public var pendingCount: Int { destinations.values.reduce(0) { $0 + $1.pending.count } }

    /// The personal events of durable record `journalSequence`, whose change happened `at`,
    /// grouped by account partition, in journal order. Returns the publishes to make now, in order.
    public mutating func add(journalSequence: UInt64, at: Int64,
                             eventsByDestination: [(destination: UInt16, events: [InboxEvent])]) -> [Publish] {
        var publishes: [Publish] = []
        for (index, events) in eventsByDestination where !events.isEmpty {
            var destination = destinations[index] ?? Destination()
            for chunk in Self.chunks(of: events) {
                let message = InboxMessage(source: source, outboxSequence: destination.nextSequence,
                                           journalSequence: journalSequence, at: at, events: chunk)
                destination.nextSequence += 1
                destination.window.append((message, false))
                publishes.append(Publish(destination: index, attempt: destination.attempt, message: message))
            }
            destinations[index] = destination
        }
        return publishes
    }

    /// The stream stored `publish`.
    public mutating func acknowledged(_ publish: Publish) {
        guard var destination = destinations[publish.destination], destination.attempt == publish.attempt,
              let position = destination.pending.firstIndex(where: {
                  $0.message.outboxSequence == publish.message.outboxSequence
              }) else { return }
        destination.window[position].acknowledged = true
        destination.dropDelivered()
        destinations[publish.destination] = destination
    }

    /// `publish` failed or its answer never came: every message to its partition not yet
    /// delivered goes again, as a new attempt. Answers to the failed attempt change nothing.
    public mutating func failed(_ publish: Publish) -> [Publish] {
        guard let destination = destinations[publish.destination], destination.attempt == publish.attempt else { return [] }
        return resend(publish.destination)
    }

    /// Everything not yet delivered, as new attempts: what a node that restored the outbox from
    /// a snapshot (or reconnected) publishes before anything new.
    public mutating func resendAll() -> [Publish] {
        destinations.keys.sorted().flatMap { resend($0) }
    }

    private mutating func resend(_ index: UInt16) -> [Publish] {
        guard var destination = destinations[index], !destination.pending.isEmpty else { return [] }
        destination.attempt += 1
        for position in destination.window.indices[destination.start...] {
            destination.window[position].acknowledged = false
        }
        destinations[index] = destination
        return destination.pending.map { Publish(destination: index, attempt: destination.attempt, message: $0.message) }
    }

    /// `events` in runs that each fit one message.
    static func chunks(of events: [InboxEvent]) -> [[InboxEvent]] {
        var chunks: [[InboxEvent]] = []
        var current: [InboxEvent] = []
        var size = InboxCodec.headerSize
        for event in events {
            let eventSize = InboxCodec.size(of: event)
            precondition(InboxCodec.headerSize + eventSize <= InboxCodec.maxMessageBytes,
                         "a personal event larger than one inbox message")
            if !current.isEmpty, size + eventSize > InboxCodec.maxMessageBytes || current.count == InboxCodec.maxEvents {
                chunks.append(current)
                current = []
                size = InboxCodec.headerSize
            }
            current.append(event)
            size += eventSize
        }
        if !current.isEmpty { chunks.append(current) }
        return chunks
    }
}
