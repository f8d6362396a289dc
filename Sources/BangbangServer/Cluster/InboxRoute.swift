// Personal events between nodes (docs/scale-out.md, section 7b): each durable record's events,
// grouped by the account partition of each recipient, handed to the inbox sender of the
// partition that committed the record. The account partitions' `InboxFollower`s hand them to
// their account halves. Every source a node commits for has its sender here.
import Cluster
import InboxProtocol

struct InboxRoute: PersonalEventRoute {
    let map: PartitionMap
    let senders: [InboxSource: InboxSender]

    func send(_ events: [InboxEvent], from source: InboxSource, journalSequence: UInt64, at: Int64) {
        guard let sender = senders[source] else {
            fatalError("internal inconsistency in InboxRoute: no inbox sender for \(source), which committed a record")
        }
        sender.send(journalSequence: journalSequence, at: at, eventsByDestination: destinations(of: events))
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
