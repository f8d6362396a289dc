// An account partition's side of the inbox: reads the inbox stream in order from a snapshot's
// position, lets `InboxReader` decide which entries to apply, and hands each applied entry to the
// account half, in the stream's order, which is what numbers every user's personal stream. A source
// in this process hands over each message the stream acknowledged with its sequence (`noteStored`):
// the stream holds exactly those bytes there, so the message is applied when it is the next in the
// stream, with no read. Anything else is read: a task asks the stream's leader for what lies past
// the position when a source in another process says it stored something (a core message on the
// inbox's `stored` subject), when a local message left a gap before it, and every second besides,
// since a wake-up may be lost. Applying runs on `queue`, where the reader's state lives: a snapshot
// cut on that queue holds the personal streams and the position they were built to together, and a
// follower started from that state numbers the rest exactly as this one did.
import BangbangApplication
import Cluster
import Dispatch
import InboxProtocol
import NATSClient
import PartitionOwner
import Synchronization

package final class InboxFollower: @unchecked Sendable {
    // Confinement: `reader`, `known`, `appliedThrough` and `waiters` are touched only on `queue`;
    // `running` is locked; `position` is the reader's position, for the reading task.
    static let pollInterval: Duration = .seconds(1)
    /// Messages asked for at once (a message is at most 256 KiB).
    static let window = 16

    let inbox: PartitionInbox
    let queue: DispatchQueue
    private var reader: InboxReader
    /// Messages handed over by local sources, past the position: applied once they are next.
    private var known: [UInt64: InboxMessage] = [:]
    private let position = Atomic<UInt64>(0)
    /// The journal sequence of the last entry applied from each source since the start.
    private var appliedThrough: [InboxSource: UInt64] = [:]
    /// What waits for a source's entries through a journal sequence to be applied.
    private var waiters: [InboxSource: [(through: UInt64, body: @Sendable () -> Void)]] = [:]
    private let deliver: @Sendable (InboxSource, InboxEntry) -> Void
    private let logger: Logger
    private let metrics: InboxMetrics
    private let running = Mutex<(tasks: [Task<Void, Never>], subscription: NATSSubscription?,
                                 wake: AsyncStream<Void>.Continuation?)>(([], nil, nil))

    /// `deliver` runs on `queue` for each applied entry, in the stream's order.
    init(inbox: PartitionInbox, state: InboxReader.State, queue: DispatchQueue, logger: Logger,
         metrics: InboxMetrics = InboxMetrics(), deliver: @escaping @Sendable (InboxSource, InboxEntry) -> Void) {
        self.inbox = inbox
        self.metrics = metrics
        self.queue = queue
        reader = InboxReader(state: state)
        position.store(state.position, ordering: .relaxed)
        metrics.appliedPosition.set(Int(state.position))
        self.deliver = deliver
        self.logger = logger
    }

    /// How far the inbox is applied, and the last entry applied from each source. Call on `queue`.
    var state: InboxReader.State {
        dispatchPrecondition(condition: .onQueue(queue))
        return reader.state
    }

    /// Runs `body` on `queue` once the entries of `source`'s records through `journalSequence`
    /// are applied (at once if they are). Call before the record's entry is published.
    func whenApplied(from source: InboxSource, through journalSequence: UInt64,
                     _ body: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if let applied = appliedThrough[source], applied >= journalSequence { return body() }
            waiters[source, default: []].append((journalSequence, body))
        }
    }

    /// How far the inbox is applied. Any thread.
    package var appliedPosition: UInt64 { position.load(ordering: .acquiring) }

    /// Asks the reading task to read the stream now. Any thread.
    func wake() { running.withLock { $0.wake }?.yield() }

    /// A source in this process had `message` stored at `sequence` of the inbox (its publish was
    /// acknowledged so). Any thread.
    func noteStored(_ message: InboxMessage, at sequence: UInt64) {
        queue.async { [self] in
            guard sequence > reader.state.position else { return }
            known[sequence] = message
            applyKnown()
            // Something before it is not here yet: read it from the stream.
            if !known.isEmpty { wake() }
        }
    }

    /// Starts following from the state given at creation. Call once, off `queue`.
    package func start() throws(NATSClientError) {
        let (wakeUps, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let subscription = try inbox.jetStream.connection.subscribe(to: inbox.storedSubject) { _ in wake.yield() }
        let from = position.load(ordering: .acquiring)
        let ticker = Task {
            while !Task.isCancelled {
                wake.yield()
                try? await Task.sleep(for: Self.pollInterval)
            }
            wake.finish()
        }
        let follower = Task { [weak self] in
            var position = from
            var isFailing = false
            for await _ in wakeUps {
                guard let self else { return }
                do {
                    position = try await readAll(after: position)
                    if isFailing { logger.info("inbox_follow_recovered", ["inbox": inbox.streamName]) }
                    isFailing = false
                } catch {
                    if !isFailing {
                        logger.warning("inbox_follow_failed", ["inbox": inbox.streamName, "detail": "\(error)",
                                                               "retry_ms": Int(Self.pollInterval.components.seconds * 1000)])
                    }
                    isFailing = true
                }
            }
        }
        running.withLock { $0 = ([ticker, follower], subscription, wake) }
    }

    func stop() {
        let (tasks, subscription, _) = running.withLock { running in
            defer { running = ([], nil, nil) }
            return running
        }
        subscription?.unsubscribe()
        for task in tasks { task.cancel() }
        // What waits on this follower goes with it: a node stops following a partition when it no
        // longer owns it, and then its clients reconnect to the new owner and resume.
        queue.async { [self] in waiters.removeAll() }
    }

    /// Reads and hands over everything past `position` the stream holds now; returns the new
    /// position.
    private func readAll(after read: UInt64) async throws(Cluster.JournalError) -> UInt64 {
        // Past what local sources' messages applied meanwhile, too.
        var position = max(read, self.position.load(ordering: .acquiring))
        while !Task.isCancelled {
            let batch = try await inbox.read(after: position, maximum: Self.window)
            guard let last = batch.last else { break }
            position = last.sequence
            queue.async { [self] in apply(batch) }
        }
        return position
    }

    /// Runs on `queue`.
    private func noteApplied(from source: InboxSource, through journalSequence: UInt64) {
        appliedThrough[source] = journalSequence
        guard var waiting = waiters[source], !waiting.isEmpty else { return }
        // Registered in journal order (a source commits in order), so the ready ones lead.
        let ready = waiting.prefix { $0.through <= journalSequence }.count
        let bodies = waiting.prefix(ready).map(\.body)
        waiting.removeFirst(ready)
        waiters[source] = waiting.isEmpty ? nil : waiting
        for body in bodies { body() }
    }

    /// Runs on `queue`.
    private func apply(_ batch: [PartitionInbox.Stored]) {
        for stored in batch {
            switch stored.message {
            case .failure(let error):
                logger.error("inbox_message_unreadable", ["inbox": inbox.streamName, "sequence": stored.sequence,
                                                          "detail": error.description])
                reader.skipUnreadable(at: stored.sequence)
            case .success(let message):
                if stored.sequence > reader.state.position { metrics.messagesRead.increment() }
                apply(message, at: stored.sequence)
            }
        }
        position.store(reader.state.position, ordering: .releasing)
        metrics.appliedPosition.set(Int(reader.state.position))
        known = known.filter { $0.key > reader.state.position }
        applyKnown()
    }

    /// Applies the local sources' messages that come next, in order. Runs on `queue`.
    private func applyKnown() {
        while let message = known.removeValue(forKey: reader.state.position + 1) {
            metrics.messagesHandedOver.increment()
            apply(message, at: reader.state.position + 1)
        }
        position.store(reader.state.position, ordering: .releasing)
        metrics.appliedPosition.set(Int(reader.state.position))
    }

    /// Runs on `queue`.
    private func apply(_ message: InboxMessage, at sequence: UInt64) {
        guard let outcome = reader.read(message, at: sequence), !outcome.applied.isEmpty else { return }
        for entry in message.entries[outcome.applied] {
            deliver(message.source, entry)
            noteApplied(from: message.source, through: entry.journalSequence)
        }
    }
}
