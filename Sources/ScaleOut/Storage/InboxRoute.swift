// Personal events between nodes: each durable record's events, grouped by the account partition of
// each recipient, handed to the inbox sender of the partition that committed the record. The
// account partitions' `InboxFollower`s hand them to their account halves. Every source a node
// commits for has its sender here.
import BangbangApplication
import Cluster
import InboxProtocol
import PartitionOwner

package struct InboxRoute: PersonalEventRoute {
    let map: PartitionMap
    let senders: [InboxSource: InboxSender]
    /// The followers of the account partitions this node owns, by index: an account partition's
    /// own record is numbered by its own follower, which says when.
    var followers: [UInt16: InboxFollower] = [:]

    package func send(_ events: [InboxEvent], from source: InboxSource, journalSequence: UInt64, at: Int64,
              received: (@Sendable () -> Void)?) {
        guard let sender = senders[source] else {
            fatalError("internal inconsistency in InboxRoute: no inbox sender for \(source), which committed a record")
        }
        let destinations = destinations(of: events)
        if let received {
            // Registered before the send, so it cannot miss the entry however fast it comes back.
            guard source.space == .accounts, destinations.map(\.destination) == [source.index],
                  let follower = followers[source.index] else {
                fatalError("internal inconsistency in InboxRoute: \(source) waits for events it does not number itself")
            }
            follower.whenApplied(from: source, through: journalSequence, received)
        }
        sender.send(journalSequence: journalSequence, at: at, eventsByDestination: destinations)
    }

    /// The events by account partition, each group in the order given, the groups in the order
    /// of their first event. Nearly always one partition (one or two recipients), so no table.
    func destinations(of events: [InboxEvent]) -> [(destination: UInt16, events: [InboxEvent])] {
        var groups: [(destination: UInt16, events: [InboxEvent])] = []
        for event in events {
            let destination = UInt16(map.partition(ofUser: event.user).index)
            if let index = groups.firstIndex(where: { $0.destination == destination }) {
                groups[index].events.append(event)
            } else {
                groups.append((destination, [event]))
            }
        }
        return groups
    }
}
