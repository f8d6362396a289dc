// A node's following of one user's personal stream when the user's account partition is owned
// elsewhere, so that a device may log in or resume on any node. Pure state, no I/O: the node's
// subscriber to `bb.user.<bucket>` hands it each of the user's events with its number, and the
// account owner's answers to "the events after N"; it says what to pass on to the user's
// devices on this node, in number order and each once, and when to ask the owner.
//
// The owner numbers the stream (1, 2, 3 … per user). Core NATS delivers at most once, in order
// from one publisher; after a failover the new owner publishes from another connection, so a
// node may see a number twice, a later one before an earlier, or never see one. The follower
// passes on only the next number; when one is missing it holds what arrives and asks the owner
// for everything after what it has (a lost event is noticed when a later one arrives, or when a
// device resumes). The owner keeps a bounded stream (the last events of each user): an answer
// that no longer reaches back that far means events are lost for the devices here (`lost`), and
// the node closes their connections with 1012, so they resume and are told to resynchronize,
// which the protocol already promises. A device that resumes on the node starts from the node's
// copy of the stream (fed by what this passes on) when it reaches back far enough, and from the
// owner's answer otherwise.

public struct PersonalStreamFollower<Event: Sendable>: Sendable {
    public struct Outcome: Sendable {
        /// Pass these to the user's devices on this node, in this order: their numbers run on
        /// from the previous `head` (each event carries its own, as the protocol's `seq`).
        public var events: [Event] = []
        /// Ask the account owner for the user's events after this number.
        public var ask: UInt64?
        /// Events were lost: the owner no longer keeps some the devices here have not had, or
        /// its stream is behind what was passed on (restored from a backup). `events` run on
        /// from the owner's stream, not from the previous `head`.
        public var lost = false
    }

    /// The number of the last event passed on (or of the start).
    public private(set) var head: UInt64
    /// The number after which the owner was asked for the events and has not answered; while
    /// set, what arrives is held.
    public private(set) var asked: UInt64?
    private var held: [UInt64: Event] = [:]

    /// Follows the stream after `number`: ask the owner for the events after it (`asked`), and
    /// subscribe to the user's subject before asking, so nothing falls between the two.
    public init(after number: UInt64) {
        head = number
        asked = number
    }

    /// An event numbered `number` arrived on the user's subject.
    public mutating func receive(_ event: Event, number: UInt64) -> Outcome {
        guard number > head else { return Outcome() }
        if asked != nil || number > head + 1 {
            held[number] = event
            guard asked == nil else { return Outcome() }
            asked = head
            return Outcome(ask: head)
        }
        head = number
        return Outcome(events: [event])
    }

    /// Something may have been lost with nothing after it to show it (this node's connection to
    /// NATS was re-established, the account partition has a new owner): ask the owner for what
    /// came after `head`, unless a question is already out.
    public mutating func recheck() -> Outcome {
        guard asked == nil else { return Outcome() }
        asked = head
        return Outcome(ask: head)
    }

    /// The owner's answer to the question `after`: the events it keeps after that number, in
    /// order (`events`; it may no longer keep the first ones), and its stream's last number.
    /// An answer to an earlier question, asked again since, changes nothing.
    public mutating func replayed(after: UInt64, events: [(number: UInt64, event: Event)], through ownerHead: UInt64) -> Outcome {
        guard asked == after else { return Outcome() }
        asked = nil
        var outcome = Outcome()
        if ownerHead < head {
            // Numbered anew: pass on what it keeps, from its first.
            outcome.lost = true
            head = (events.first?.number ?? ownerHead + 1) - 1
            held.removeAll()
        }
        for (number, event) in events where number > head && number <= ownerHead {
            if number > head + 1 { outcome.lost = true }
            outcome.events.append(event)
            head = number
        }
        if ownerHead > head {
            // The newest events were not kept (each alone over the stream's byte limit).
            outcome.lost = true
            head = ownerHead
        }
        held = held.filter { $0.key > head }
        while let next = held.removeValue(forKey: head + 1) {
            outcome.events.append(next)
            head += 1
        }
        if !held.isEmpty {
            asked = head
            outcome.ask = head
        }
        return outcome
    }
}
