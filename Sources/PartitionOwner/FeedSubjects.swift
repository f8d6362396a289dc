// The feed subjects: every change a board partition's owner numbers on a board is published once,
// live, on `bb.feed.p<n>.<type>`, with the partition, its number for the change and the order
// before and after it (FeedEventFrame, the orders in the storage's encoding). A node whose runners
// watch that board subscribes to `bb.feed.*.<type>` (FollowedBoards.swift), numbers what it
// forwards itself and frames it once for all of them. Core NATS: at most once; a node that sees a
// partition's number skip closes that board's watchers so they subscribe again, so nothing here
// waits for or retries a publish.
import BangbangApplication
import BangbangCore
import BangbangStorage
import Cluster
import InboxProtocol
import NATSClient

package struct FeedSubjects: Sendable {
    static let standardPrefix = "bb.feed"

    /// `bb.feed` in production; a test puts a lossy relay between owner and node under another.
    let prefix: String

    package init(prefix: String = FeedSubjects.standardPrefix) {
        self.prefix = prefix
    }

    package func subject(of partition: PartitionID, _ type: OrderType) -> String { "\(prefix).\(partition).\(type.rawValue)" }

    /// Every partition's changes of `type`'s board.
    package func subject(ofEveryPartition type: OrderType) -> String { "\(prefix).*.\(type.rawValue)" }
}

/// The owner's side: installed on the board publisher while this node owns the partition.
package final class FeedEventPublisher: BoardChangeForwarding {
    let connection: NATSConnection
    package let partition: PartitionID
    package let metrics: RelayMetrics
    private let subjects: [OrderType: String]

    package init(connection: NATSConnection, partition: PartitionID, subjects: FeedSubjects = FeedSubjects(), metrics: RelayMetrics) {
        self.connection = connection
        self.partition = partition
        self.metrics = metrics
        self.subjects = Dictionary(uniqueKeysWithValues: OrderType.allCases.map { ($0, subjects.subject(of: partition, $0)) })
    }

    /// Called once per change of a board, on the publishing queue, so a board's changes leave in
    /// number order. Encodes both states of the order and queues the publish.
    package func publish(sequence: UInt64, before: Order?, after: Order) {
        let payload = FeedEventFrame.encode(partition: UInt16(partition.index), sequence: sequence,
                                            before: before.map(StoredOrder.encoded), after: StoredOrder.encoded(after))
        do {
            try connection.publish(subjects[after.details.type]!, payload: payload)
            metrics.feedEventsPublished.increment()
        } catch {
            // The nodes watching the board see the number skip and have their watchers subscribe again.
            metrics.feedEventPublishFailures.increment()
        }
    }
}
