// The account half of the publisher: the personal streams of an account partition's users, fed
// only by what the partition's inbox hands it (PersonalEventRoute.swift), in the inbox's order.
// That order is the numbering: each event gets the next number of its user and is posted to the
// loops that hold a connection of that user (`Presence`). The approved runners are the
// partition's own fact, kept here so accepts and counts need no hop to the accounts owner. In a
// cluster each live event is also published once on the user's subject, for the devices of the
// user that other nodes hold (`PersonalEventForwarding`).
import BangbangCore
import BangbangProtocol
import InboxProtocol
import Synchronization
import WebSocketServer

/// Where each live personal event also goes, numbered, besides this process's connections: in a
/// cluster, the user's subject, for the devices other nodes hold (ScaleOut's UserSubjects.swift).
package protocol PersonalEventForwarding: Sendable {
    func publish(user: UserID, number: UInt64, message: [UInt8])
}

/// `receive` runs in inbox order: on the publishing queue (live) or during replay.
package final class AccountPublisher: Sendable {
    package let streams: PersonalStreams
    package let presence = Presence()
    let approvedRunners = Mutex<Set<UserID>>([])
    /// Set while this node owns the account partition in a cluster.
    package let eventPublisher = Mutex<(any PersonalEventForwarding)?>(nil)
    private let loops: LoopDirectory

    init(streams: PersonalStreams, loops: LoopDirectory) {
        self.streams = streams
        self.loops = loops
    }

    /// Updated before the user is told, so an approved runner's next accept sees it.
    func noteRunnerDecision(_ user: UserID, isApproved: Bool) {
        approvedRunners.withLock { runners in
            if isApproved { runners.insert(user) } else { runners.remove(user) }
        }
    }

    package func isApprovedRunner(_ user: UserID) -> Bool { approvedRunners.withLock { $0.contains(user) } }

    /// The registries of the loops that hold a logged-in connection of `user`.
    package func registries(holding user: UserID) -> [LoopRegistry] { loops.registries(in: presence.loops(of: user)) }

    /// Numbers and delivers the events of one inbox entry: one record's events for this
    /// partition's users, `at` the record's time (milliseconds).
    package func receive(_ events: [InboxEvent], at: Int64) {
        let live = loops.live
        let publisher = live == nil ? nil : eventPublisher.withLock { $0 }
        let time = Timestamp(rawValue: at)
        for event in events { append(event, at: time, loops: live, publisher: publisher) }
    }

    /// `loops`: nil while recovering (numbered, delivered to no one).
    private func append(_ event: InboxEvent, at: Timestamp, loops: [LoopDirectory.WeakRegistry]?,
                        publisher: (any PersonalEventForwarding)?) {
        let user = UserID(event.user)
        streams.append(for: user, at: at, makeMessage: { sequence in
            EventMessage.personal(name: event.name, sequence: sequence, encodedData: event.data)
        }, deliver: { sequence, bytes in
            // Under the stream lock, which a login also holds while it replays and registers:
            // a loop either has the session registered (and is sent it) or the replay has it.
            guard let loops else { return }
            publisher?.publish(user: user, number: sequence, message: bytes)
            let bits = presence.loops(of: user)
            guard bits != 0 else { return }
            let message = SharedMessage(text: bytes)
            LoopDirectory.forEach(in: bits, of: loops) { $0.post(.personal(user, sequence: sequence, message)) }
        })
    }
}
