// A node's forwarding of board changes that other nodes' partitions number: for each board (order
// type) a watcher here follows, one subscription to `bb.feed.*.<type>` and a `FeedSequencer` that
// gives each change the node's own `seq`; each forwarded change becomes one `FeedBroadcast`,
// decided and framed once for every watcher here, as a change committed here is. A partition whose
// numbers skip lost a change nobody can replay: the board's watchers here are told (`gap`), so
// their connections are closed with 1012 and they subscribe again, which the protocol already asks
// of a client after any reconnect.
import BangbangApplication
import BangbangCore
import BangbangStorage
import Cluster
import Dispatch
import InboxProtocol
import NATSClient
import PartitionOwner

package final class FollowedBoards: @unchecked Sendable {
    // Confinement: `boards`, `subscriptions` and `nextSubscription` are touched only on `queue`,
    // where the NATS subscriptions deliver and the partitions' parts of a listing are handed back.

    package struct Sink: Sendable {
        /// A change to pass to the board's watchers here, numbered by this node; on `queue`, in
        /// the order of the numbers.
        let deliver: @Sendable (FeedBroadcast) -> Void
        /// Changes of the board were lost (on `queue`): close its watchers here with 1012.
        let gap: @Sendable (OrderType, _ reason: String) -> Void
    }

    private struct Board {
        var sequencer = FeedSequencer()
        var subscription: NATSSubscription?
        var watchers = 0
    }

    let queue = DispatchQueue(label: "bangbang.followed-boards", qos: .userInitiated)
    private let connection: NATSConnection
    private let subjects: FeedSubjects
    private let metrics: RelayMetrics
    private let logger: Logger
    private let sink: Sink
    private var boards: [OrderType: Board] = [:]
    /// The watchers' `board.subscribe`s in progress or settled (BoardSubscriptions.swift).
    var subscriptions: [UInt64: BoardSubscription] = [:]
    var nextSubscription: UInt64 = 1
    /// The subscriptions a change found still settling, kept for its capacity (`offer`).
    var settling: [UInt64] = []

    init(connection: NATSConnection, subjects: FeedSubjects = FeedSubjects(), metrics: RelayMetrics, logger: Logger, sink: Sink) {
        self.connection = connection
        self.subjects = subjects
        self.metrics = metrics
        self.logger = logger
        self.sink = sink
    }

    /// A watcher here follows `type`'s board: the first one subscribes to every partition's
    /// changes of it. On `queue`.
    func watch(_ type: OrderType) throws(NATSClientError) {
        dispatchPrecondition(condition: .onQueue(queue))
        var board = boards[type] ?? Board()
        if board.subscription == nil {
            board.subscription = try connection.subscribe(to: subjects.subject(ofEveryPartition: type), deliveringOn: queue) {
                [weak self] message in self?.received(message.payload, on: type)
            }
            metrics.followedBoards.add(1)
        }
        board.watchers += 1
        boards[type] = board
    }

    /// A watcher of `type`'s board left; with the last one the subscription goes, and the node's
    /// numbering of the board stays where it was. On `queue`.
    func unwatch(_ type: OrderType) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard var board = boards[type], board.watchers > 0 else { return }
        board.watchers -= 1
        if board.watchers == 0, let subscription = board.subscription {
            subscription.unsubscribe()
            board.subscription = nil
            board.sequencer.stopListening()
            metrics.followedBoards.add(-1)
        }
        boards[type] = board
    }

    /// The `seq` of the last change of `type`'s board forwarded here. On `queue`.
    func position(of type: OrderType) -> UInt64 {
        dispatchPrecondition(condition: .onQueue(queue))
        return boards[type]?.sequencer.sequence ?? 0
    }

    private func received(_ payload: ArraySlice<UInt8>, on type: OrderType) {
        guard boards[type]?.subscription != nil else { return }
        guard let frame = FeedEventFrame.decode(payload) else {
            return logger.warning("feed_event_refused", ["type": type.rawValue, "bytes": payload.count, "detail": "not a board change; dropped"])
        }
        guard let decision = boards[type]?.sequencer.receive(from: frame.partition, partitionSequence: frame.sequence) else { return }
        switch decision {
        case .stale:
            return
        case .gap(let partition, let expected, let received):
            reportGap(on: type, "changes \(expected)…\(received - 1) of partition p\(partition) were lost")
        case .forward(let sequence):
            do {
                let before = frame.before.isEmpty ? nil : try StoredOrder.decode(Array(frame.before))
                let after = try StoredOrder.decode(Array(frame.after))
                guard after.details.type == type, before.map({ $0.details.type == type }) ?? true else {
                    throw JournalEntryError(message: "an order of another board")
                }
                let broadcast = FeedBroadcast(before: before, after: after, boardSequence: sequence, data: FeedBroadcast.Data(after))
                sink.deliver(broadcast)
                offer(broadcast, from: frame.partition, partitionSequence: frame.sequence)
            } catch {
                // Numbered and not forwarded: the watchers would miss it, as after a gap.
                reportGap(on: type, "a change of partition p\(frame.partition) could not be read (\(error))")
            }
        }
    }

    private func reportGap(on type: OrderType, _ reason: String) {
        metrics.feedGaps.increment()
        logger.warning("feed_gap", ["type": type.rawValue, "detail": reason])
        sink.gap(type, reason)
    }
}
