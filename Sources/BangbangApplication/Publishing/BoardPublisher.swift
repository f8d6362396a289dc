// The board half of the publisher: what a board partition's owner tells once its record is
// durable. It numbers each change of a board (one sequence per order type, the feed's `seq`)
// and frames the feed's messages once for every watcher on every loop. It knows nothing of
// accounts: the change's personal events leave through the inbox (Publisher.swift). In a cluster
// each live change is also published once on its board's feed subject, for the watchers other
// nodes hold (`BoardChangeForwarding`).
import BangbangCore
import Synchronization

/// Where each live board change also goes, numbered, besides this process's watchers: in a
/// cluster, its board's feed subject, for the watchers other nodes hold (ScaleOut's FeedSubjects.swift).
package protocol BoardChangeForwarding: Sendable {
    func publish(sequence: UInt64, before: Order?, after: Order)
}

/// `publish` runs on the publishing queue (live) or during replay; the sequences are locked
/// because the snapshot's cut and `board.subscribe` read them from other queues.
package final class BoardPublisher: Sendable {
    let sequences = Mutex<[OrderType: UInt64]>([:])
    package let feedWatchers = WatcherTotal()
    /// Set while this node owns the board partition in a cluster.
    package let eventPublisher = Mutex<(any BoardChangeForwarding)?>(nil)
    private let loops: LoopDirectory

    init(loops: LoopDirectory) {
        self.loops = loops
    }

    package func sequence(of type: OrderType) -> UInt64 { sequences.withLock { $0[type] ?? 0 } }

    package func publish(_ board: Announcement.BoardChange) {
        let type = board.change.after.details.type
        let sequence = sequences.withLock { table -> UInt64 in
            table[type, default: 0] += 1
            return table[type]!
        }
        guard let loops = loops.live else { return }
        eventPublisher.withLock { $0 }?.publish(sequence: sequence, before: board.change.before, after: board.change.after)
        guard !feedWatchers.isZero else { return }
        let broadcast = FeedBroadcast(before: board.change.before, after: board.change.after, boardSequence: sequence,
                                      data: board.feedData ?? FeedBroadcast.Data(board.change.after))
        for weak in loops {
            guard let registry = weak.registry, registry.hasWatchers else { continue }
            registry.post(.feed(broadcast))
        }
    }
}
