// A source partition's publishes to the account partitions' inboxes (docs/scale-out.md, section
// 7b): the I/O around InboxProtocol's `InboxOutbox`. Durable records' personal events are handed
// over in journal order; the outbox numbers them, and they are published pipelined, each inbox
// `bb.inbox.a<n>` in the order the outbox gave. The stream's answers come back on the NATS
// connection's loop, where the outbox lives, so an answer costs no lock and no thread hop.
//
// A failed publish (refused, timed out, connection lost) makes the outbox send again everything
// of that partition not yet delivered. Those publishes are held for a pause first (50 ms,
// doubling to 2 s while failures go on, back to 50 ms after an acknowledgement), together with
// whatever is added for the partition meanwhile, and then sent in the outbox's order: a NATS
// server that is down is not asked again in a tight loop, and the order the reader needs is kept.
import Cluster
import Dispatch
import InboxProtocol
import NATSClient
import SocketServer
import Synchronization

final class InboxSender: @unchecked Sendable {
    // Confinement: `outbox` and `pauses` are touched only on `loop` (the NATS connection's
    // loop); `undelivered` and `handedOver` are safe from any thread.
    private let jetStream: JetStream
    private let loop: EventLoop
    private var outbox: InboxOutbox
    private var pauses: [UInt16: Pause] = [:]
    private let undelivered = Atomic<Int>(0)
    /// Records handed over and not yet added to the outbox.
    private let handedOver = Atomic<Int>(0)
    private let onFailure: @Sendable (UInt16, NATSClientError) -> Void

    static let firstPauseMilliseconds = 50
    static let longestPauseMilliseconds = 2_000

    private struct Pause {
        var milliseconds = InboxSender.firstPauseMilliseconds
        /// Publishes waiting for the pause to end, in the outbox's order.
        var held: [InboxOutbox.Publish] = []
        var isWaiting = false
    }

    /// `outbox`: new, or restored from a snapshot; what it holds undelivered is sent first.
    /// `onFailure` hears of each failed publish (for the log), on the loop.
    init(jetStream: JetStream, outbox: InboxOutbox,
         onFailure: @escaping @Sendable (UInt16, NATSClientError) -> Void = { _, _ in }) {
        self.jetStream = jetStream
        loop = jetStream.connection.loop
        self.outbox = outbox
        self.onFailure = onFailure
        undelivered.store(outbox.pendingCount, ordering: .relaxed)
        loop.execute { [self] in
            send(self.outbox.resendAll())
        }
    }

    /// Messages not yet delivered, plus records handed over and not yet turned into messages:
    /// 0 once everything handed over so far is delivered.
    var undeliveredCount: Int { handedOver.load(ordering: .acquiring) + undelivered.load(ordering: .acquiring) }

    /// The personal events of durable record `journalSequence` (its change made `at`), by account
    /// partition. Call in journal order, from one queue.
    func send(journalSequence: UInt64, at: Int64, eventsByDestination: [(destination: UInt16, events: [InboxEvent])]) {
        handedOver.add(1, ordering: .releasing)
        loop.execute { [self] in
            send(outbox.add(journalSequence: journalSequence, at: at, eventsByDestination: eventsByDestination))
            handedOver.subtract(1, ordering: .releasing)
        }
    }

    /// The outbox as it is once everything handed over before this call was added (for a snapshot).
    func state(_ body: @escaping @Sendable (InboxOutbox.State) -> Void) {
        loop.execute { [self] in body(outbox.state) }
    }

    // MARK: On the loop

    private func send(_ publishes: [InboxOutbox.Publish]) {
        for publish in publishes {
            if pauses[publish.destination]?.isWaiting == true {
                pauses[publish.destination]?.held.append(publish)
                continue
            }
            do {
                try jetStream.startPublish(PartitionInbox.subject(of: PartitionID(space: .accounts, index: Int(publish.destination))),
                                           payload: InboxCodec.encode(publish.message)) { [self] result in
                    switch result {
                    case .success: acknowledged(publish)
                    case .failure(let error): failed(publish, error)
                    }
                }
            } catch {
                failed(publish, error)
            }
        }
        undelivered.store(outbox.pendingCount, ordering: .releasing)
    }

    private func acknowledged(_ publish: InboxOutbox.Publish) {
        outbox.acknowledged(publish)
        if pauses[publish.destination]?.isWaiting == false { pauses[publish.destination] = nil }
        undelivered.store(outbox.pendingCount, ordering: .releasing)
    }

    private func failed(_ publish: InboxOutbox.Publish, _ error: NATSClientError) {
        let again = outbox.failed(publish)
        guard !again.isEmpty else { return }
        onFailure(publish.destination, error)
        var pause = pauses[publish.destination] ?? Pause()
        pause.held = again
        if !pause.isWaiting {
            pause.isWaiting = true
            let destination = publish.destination
            loop.schedule(afterMilliseconds: pause.milliseconds) { [self] in endPause(destination) }
        }
        pauses[publish.destination] = pause
    }

    private func endPause(_ destination: UInt16) {
        guard var pause = pauses[destination] else { return }
        let held = pause.held
        pause.held = []
        pause.isWaiting = false
        pause.milliseconds = min(pause.milliseconds * 2, Self.longestPauseMilliseconds)
        pauses[destination] = pause
        send(held)
    }
}
