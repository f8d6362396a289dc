// The publisher: what runs once a change is durable, in journal order, on the journal's completion
// queue (serial, in sequence order). It is two halves joined the way a board partition and an
// account partition are: the board half numbers the board's change and frames the feed
// (BoardPublisher.swift); the change's personal events go through the route to the account half,
// which numbers each user's stream and delivers it (PersonalEventRoute.swift,
// AccountPublisher.swift). The bytes are encoded already by the owner (Announcement.swift); each
// loop drains what it is posted once per turn (LoopRegistry.swift). Recovery replays the journal
// through `publish` too, so the numbering after a restart is the numbering that was given live. On
// one node there is one partition of each kind: `p0` holds every board, `a0` every account.
import BangbangCore
import Dispatch
import InboxProtocol

/// Confined to `queue` (`publish`), except for the halves' locked tables, which the loops and the
/// snapshot's cut read. `attach` runs once, before anything is published live.
package final class Publisher: Sendable {
    /// A single node's partitions, `p0` and `a0`, as sources of personal events.
    static let boardsSource = InboxSource(space: .boards, index: 0)
    static let accountsSource = InboxSource(space: .accounts, index: 0)

    /// The journal's completion queue.
    let queue: DispatchQueue
    let loops = LoopDirectory()
    package let boards: BoardPublisher
    package let accounts: AccountPublisher
    let route: any PersonalEventRoute

    /// `route`: where personal events go; nil hands them to `accounts` in this process.
    convenience init(queue: DispatchQueue, streams: PersonalStreams = PersonalStreams(), route: (any PersonalEventRoute)? = nil) {
        self.init(queue: queue, streams: streams, makeRoute: { accounts in route ?? LocalInbox(accounts: accounts) })
    }

    /// `makeRoute` is given the account half, which the route's far end (the inbox's follower) feeds.
    init(queue: DispatchQueue, streams: PersonalStreams, makeRoute: (AccountPublisher) -> any PersonalEventRoute) {
        self.queue = queue
        boards = BoardPublisher(loops: loops)
        accounts = AccountPublisher(streams: streams, loops: loops)
        route = makeRoute(accounts)
    }

    /// Starts live delivery to `registries`, indexed by loop. Call once, before serving.
    package func attach(to registries: [LoopRegistry]) { loops.attach(registries) }

    /// Tells what the durable record `journalSequence` of partition `source` changed. Runs on
    /// `queue` (live) or during replay (no one is connected). `then` runs once the record's
    /// personal events are numbered (at once when it has none): only an account partition's own
    /// records pass one (a login, a logout). `inProcess` hands the personal events to the account
    /// half here, whatever the route: an import replays one node's journal, whose single order
    /// numbered them there.
    package func publish(_ announcement: Announcement, from source: InboxSource, journalSequence: UInt64,
                 inProcess: Bool = false, then: (@Sendable () -> Void)? = nil) {
        if let decision = announcement.runnerDecision {
            accounts.noteRunnerDecision(decision.user, isApproved: decision.isApproved)
        }
        if announcement.personal.isEmpty {
            then?()
        } else if inProcess {
            accounts.receive(announcement.personal, at: announcement.at.rawValue)
            then?()
        } else {
            precondition(then == nil || source.space == .accounts,
                         "only an account partition's own record waits for its events to be numbered")
            route.send(announcement.personal, from: source, journalSequence: journalSequence,
                       at: announcement.at.rawValue, received: then)
        }
        if let board = announcement.board { boards.publish(board) }
    }
}
