// The user subjects: every event the owner of an account partition numbers in a user's personal
// stream is published once on `bb.user.<user id mod 4096>`, with the user and its number, its
// message as the user's devices are sent it (PersonalEventFrame). A node holding a device of the
// user subscribes to the user's bucket (FollowedStreams.swift). Core NATS: at most once, in order
// from one owner; a node that misses an event asks the owner for it, so nothing here waits for or
// retries a publish. An event lost with nothing after it to show it is asked for too: a node asks
// for all its devices when its NATS connection comes back, and when an account partition's new
// owner announces itself on `bb.user.owner` (the events it numbered while recovering were published
// by nobody).
import BangbangApplication
import BangbangCore
import Cluster
import InboxProtocol
import NATSClient

package struct UserSubjects: Sendable {
    static let bucketCount: UInt64 = 4096
    static let standardPrefix = "bb.user"

    /// `bb.user` in production; a test puts a lossy relay between owner and node under another.
    let prefix: String
    private let subjects: [String]

    package init(prefix: String = UserSubjects.standardPrefix) {
        self.prefix = prefix
        subjects = (0..<Self.bucketCount).map { "\(prefix).\($0)" }
    }

    package static func bucket(of user: UserID) -> UInt64 { user.rawValue % bucketCount }

    package func subject(of user: UserID) -> String { subjects[Int(Self.bucket(of: user))] }

    /// Where an account partition's owner says it has started publishing (the payload names the
    /// partition, `a0`).
    package var ownerSubject: String { "\(prefix).owner" }
}

/// The owner's side: installed on the account publisher while this node owns the partition.
package final class PersonalEventPublisher: PersonalEventForwarding {
    let connection: NATSConnection
    let subjects: UserSubjects
    package let metrics: RelayMetrics

    package init(connection: NATSConnection, subjects: UserSubjects = UserSubjects(), metrics: RelayMetrics) {
        self.connection = connection
        self.subjects = subjects
        self.metrics = metrics
    }

    /// Tells the nodes following users of `partition` that this node numbers their events now.
    package func announce(_ partition: PartitionID) {
        try? connection.publish(subjects.ownerSubject, payload: Array(partition.description.utf8))
    }

    /// Called once per numbered event, under the user's stream lock, so one user's events leave in
    /// number order. Queues the publish and returns.
    package func publish(user: UserID, number: UInt64, message: [UInt8]) {
        do {
            try connection.publish(subjects.subject(of: user),
                                   payload: PersonalEventFrame.encode(user: user.rawValue, number: number, message: message))
            metrics.userEventsPublished.increment()
        } catch {
            // The nodes that follow the user notice the missing number at the next event or resume.
            metrics.userEventPublishFailures.increment()
        }
    }
}
