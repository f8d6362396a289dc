// The inbox between a node's two partitions of a pair when the account partition has a stream of
// its own: a node that owns the board partition `p<k>` and the account partition `a<k>` sends every
// personal event between them over the inbox, as nodes owning them apart would. The application
// sees it as an `InboxLink` (how snapshots cut it is PartitionedSnapshots.swift there).
import BangbangApplication
import BangbangStorage
import Cluster
import Dispatch
import Foundation
import InboxProtocol
import NATSClient
import PartitionOwner
import Synchronization

/// The inbox between a node's partitions: a sender per source the node commits for, and the
/// follower of the account partition it owns.
package struct InboxWiring: InboxLink {
    let senders: [InboxSource: InboxSender]
    let follower: InboxFollower

    package var name: String { follower.inbox.streamName }
    package var appliedPosition: UInt64 { follower.appliedPosition }
    package var readerState: InboxReader.State { follower.state }
    package func start() throws { try follower.start() }
    package func stop() { follower.stop() }

    /// The senders of the pair's two sources (`sources`, of the partitions `map` divides)
    /// restored from the outboxes the snapshots kept (new ones without), and the follower of the
    /// pair's account partition from the reader's state; the follower is not started. Returns the
    /// route the publisher sends through, feeding `accounts` on `queue`.
    static func make(_ parameters: InboxLinkParameters, jetStream: JetStream, map: PartitionMap) -> (InboxWiring, InboxRoute) {
        let (sources, outboxes, reader, accounts) = (parameters.sources, parameters.outboxes, parameters.reader, parameters.accounts)
        let (queue, logger, metrics) = (parameters.queue, parameters.logger, parameters.metrics)
        let partition = PartitionID(space: .accounts, index: Int(sources.accounts.index))
        let follower = InboxFollower(inbox: PartitionInbox(partition: partition, jetStream: jetStream), state: reader,
                                     queue: queue, logger: logger, metrics: metrics) { _, entry in
            accounts.receive(entry.events, at: entry.at)
        }
        var senders: [InboxSource: InboxSender] = [:]
        for source in [sources.boards, sources.accounts] {
            let outbox = outboxes[source].map { InboxOutbox(source: source, state: $0) } ?? InboxOutbox(source: source)
            let sender = InboxSender(jetStream: jetStream, outbox: outbox,
                                     localFollowers: [sources.accounts.index: follower]) { destination, error in
                metrics.publishFailures.increment()
                logger.warning("inbox_publish_failed", ["source": "\(source)", "inbox": "a\(destination)", "detail": "\(error)"])
            }
            metrics.track { sender.undeliveredCount }
            senders[source] = sender
        }
        let wiring = InboxWiring(senders: senders, follower: follower)
        return (wiring, InboxRoute(map: map, senders: senders, followers: [sources.accounts.index: follower]))
    }

    package func catchUp(within bound: Duration) throws {
        let deadline = ContinuousClock.now + bound
        let inbox = follower.inbox
        while true {
            if senders.values.allSatisfy({ $0.undeliveredCount == 0 }) {
                let end = try blocking { try await inbox.jetStream.streamInfo(inbox.streamName).lastSequence }
                if follower.appliedPosition >= end { return }
                follower.wake()
            }
            guard ContinuousClock.now < deadline else {
                throw ClusterError("the inbox \(inbox.streamName) was not applied to its end within \(bound) "
                                   + "(applied through \(follower.appliedPosition))")
            }
            usleep(5_000)
        }
    }

    package func purge(through position: UInt64) throws {
        let inbox = follower.inbox
        try blocking { try await inbox.purge(through: position) }
    }

    package func outboxStates() -> [InboxSource: InboxOutbox.State] {
        let group = DispatchGroup()
        let states = Mutex<[InboxSource: InboxOutbox.State]>([:])
        for (source, sender) in senders {
            group.enter()
            sender.state { state in
                states.withLock { $0[source] = state }
                group.leave()
            }
        }
        group.wait()
        return states.withLock { $0 }
    }
}

