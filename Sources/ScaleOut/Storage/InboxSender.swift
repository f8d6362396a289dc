// A source partition's publishes to the account partitions' inboxes: the I/O around InboxProtocol's
// `InboxOutbox`. Durable records' personal events are handed over in journal order under a short
// lock; the first of a burst schedules one turn of the NATS connection's loop, which adds the whole
// burst to the outbox and publishes what it made, a few messages per account partition however many
// records the burst held. The stream's answers come back on the same loop, where the outbox lives,
// so an answer costs no lock and no thread hop.
//
// One message per account partition is on the wire at a time: what is added for a partition while
// its message is unanswered goes out together in the next (group commit, as the journal's, in
// StreamJournal.swift), so a busy source costs each inbox few replications.
//
// A failed publish (refused, timed out, connection lost) makes the outbox send again everything
// of that partition not yet delivered. The partition is paused first (50 ms, doubling to 2 s
// while failures go on, back to 50 ms after an acknowledgement), and what is added for it
// meanwhile waits too: a NATS server that is down is not asked again in a tight loop, and the
// order the reader needs is kept.
import BangbangApplication
import Cluster
import Dispatch
import InboxProtocol
import NATSClient
import PartitionOwner
import SocketServer
import Synchronization

package final class InboxSender: @unchecked Sendable {
    // Confinement: `outbox`, `pauses`, `paused` and `unanswered` are touched only on `loop` (the
    // NATS connection's loop); `handoff`, `inTransit` and `undelivered` are safe from any thread.
    package typealias Record = (journalSequence: UInt64, at: Int64, eventsByDestination: [(destination: UInt16, events: [InboxEvent])])

    /// What is handed over to the loop, in order: a snapshot's request for the outbox's state
    /// waits behind the records handed over before it, and records handed over after it wait
    /// behind it.
    private enum Handed {
        case record(Record)
        case stateRequest(@Sendable (InboxOutbox.State) -> Void)
    }

    private let jetStream: JetStream
    private let loop: EventLoop
    private var outbox: InboxOutbox
    private var pauses: [UInt16: Int] = [:]
    private var paused: Set<UInt16> = []
    /// Publishes sent and not yet answered, by account partition: while one is, nothing more is
    /// sent there.
    private var unanswered: [UInt16: Int] = [:]
    /// Records (and state requests) handed over and not yet added to the outbox, in journal order.
    private let handoff = Mutex<[Handed]>([])
    private let undelivered = Atomic<Int>(0)
    /// Items taken from `handoff` and not yet in the outbox (counted under `handoff`'s lock).
    private let inTransit = Atomic<Int>(0)
    private let onFailure: @Sendable (UInt16, NATSClientError) -> Void
    private let localFollowers: [UInt16: InboxFollower]

    static let firstPauseMilliseconds = 50
    static let longestPauseMilliseconds = 2_000

    /// `outbox`: new, or restored from a snapshot; what it holds undelivered is sent first.
    /// `localFollowers`: the followers in this process, by account partition, handed each
    /// message their inbox stored; an inbox followed elsewhere is told on its `stored` subject.
    /// `onFailure` hears of each failed publish (for the log), on the loop.
    init(jetStream: JetStream, outbox: InboxOutbox, localFollowers: [UInt16: InboxFollower] = [:],
         onFailure: @escaping @Sendable (UInt16, NATSClientError) -> Void = { _, _ in }) {
        self.jetStream = jetStream
        loop = jetStream.connection.loop
        self.outbox = outbox
        self.localFollowers = localFollowers
        self.onFailure = onFailure
        undelivered.store(outbox.pendingCount, ordering: .relaxed)
        loop.execute { [self] in publishReady() }
    }

    /// Entries not yet delivered, plus records handed over and not yet made entries: 0 once
    /// everything handed over so far is delivered.
    var undeliveredCount: Int {
        handoff.withLock { items in items.count { if case .record = $0 { true } else { false } } }
            + inTransit.load(ordering: .acquiring) + undelivered.load(ordering: .acquiring)
    }

    /// The personal events of durable record `journalSequence` (its change made `at`), by account
    /// partition. Call in journal order, from one queue.
    func send(journalSequence: UInt64, at: Int64, eventsByDestination: [(destination: UInt16, events: [InboxEvent])]) {
        handOver(.record((journalSequence, at, eventsByDestination)))
    }

    /// The outbox as it is once everything handed over before this call was added, and nothing
    /// handed over after it (for a snapshot's cut); `body` runs on the loop.
    func state(_ body: @escaping @Sendable (InboxOutbox.State) -> Void) {
        handOver(.stateRequest(body))
    }

    private func handOver(_ item: Handed) {
        let isFirstOfBurst = handoff.withLock { items in
            items.append(item)
            return items.count == 1
        }
        if isFirstOfBurst { loop.execute { [self] in addHandedOver() } }
    }

    // MARK: On the loop

    private func addHandedOver() {
        let items = handoff.withLock { items in
            defer { items.removeAll(keepingCapacity: true) }
            inTransit.add(items.count, ordering: .relaxed)
            return items
        }
        guard !items.isEmpty else { return }
        // Once `publishReady` has counted them as undelivered.
        defer { inTransit.subtract(items.count, ordering: .releasing) }
        for item in items {
            switch item {
            case .record(let record):
                outbox.add(journalSequence: record.journalSequence, at: record.at, eventsByDestination: record.eventsByDestination)
            case .stateRequest(let body):
                body(outbox.state)
            }
        }
        publishReady()
    }

    /// Publishes every entry not yet sent to a partition that is neither paused nor waiting for an
    /// answer.
    private func publishReady() {
        let waiting = paused.union(unanswered.keys)
        for publish in outbox.publishes(excluding: waiting) {
            unanswered[publish.destination, default: 0] += 1
            do {
                try jetStream.startPublish(PartitionInbox.subject(of: PartitionID(space: .accounts, index: Int(publish.destination))),
                                           payload: InboxCodec.encode(publish.message)) { [self] result in
                    switch result {
                    case .success(let acknowledgement): acknowledged(publish, storedAt: acknowledgement.sequence)
                    case .failure(let error): failed(publish, error)
                    }
                }
            } catch {
                failed(publish, error)
            }
        }
        undelivered.store(outbox.pendingCount, ordering: .releasing)
    }

    /// Every publish gets one answer (an acknowledgement, or a failure: a timeout at the latest).
    private func answered(_ publish: InboxOutbox.Publish) {
        let left = (unanswered[publish.destination] ?? 1) - 1
        unanswered[publish.destination] = left > 0 ? left : nil
    }

    private func acknowledged(_ publish: InboxOutbox.Publish, storedAt sequence: UInt64) {
        answered(publish)
        defer { publishReady() }
        outbox.acknowledged(publish)
        if !paused.contains(publish.destination) { pauses[publish.destination] = nil }
        undelivered.store(outbox.pendingCount, ordering: .releasing)
        if let follower = localFollowers[publish.destination] {
            follower.noteStored(publish.message, at: sequence)
        } else {
            // A wake-up only: the follower reads the stream, and polls should this be lost.
            try? jetStream.connection.publish(PartitionInbox.storedSubject(of: PartitionID(space: .accounts, index: Int(publish.destination))),
                                              payload: [])
        }
    }

    private func failed(_ publish: InboxOutbox.Publish, _ error: NATSClientError) {
        answered(publish)
        guard outbox.failed(publish) else {
            // An earlier attempt's answer: what waited behind it may go now.
            loop.execute { [self] in publishReady() }
            return
        }
        onFailure(publish.destination, error)
        let destination = publish.destination
        let pause = pauses[destination] ?? Self.firstPauseMilliseconds
        pauses[destination] = min(pause * 2, Self.longestPauseMilliseconds)
        paused.insert(destination)
        loop.schedule(afterMilliseconds: pause) { [self] in
            paused.remove(destination)
            publishReady()
        }
    }
}
