// Where a node gives up a partition: the life of a cluster node from joining to exit, as a sans-I/O
// state machine. The runner (ScaleOut's ClusterRunner) feeds it what happened — joined, a lease
// acquired or lost, a pair recovered, a hand-back due, an append the stream refused, a stop asked
// for — and performs the actions it returns: recover a pair, stop serving one, or end the process
// with a status. It never ends the process itself: `exit` is an action, which the executable
// carries out and a test reads.
//
//   joining ──joined──▶ standby ──acquired p──▶ recovering p ──recovered──▶ serving p
//                                                   │                          │
//                            recovery failed ───────┘                          ├─ hand-back due ─▶ handing back p ─stopped─▶ (released)
//                                                                              ├─ lost (taken, expired), fenced ─▶ exit 75
//   any ── stop asked ──▶ leaving (every pair stopped, leases handed back; the executable exits 0)
//
// Why crash-only: a node that may no longer own what it serves must stop serving at once, and
// the simplest state to be in after that is none; a supervisor starts it again as a standby and
// it recovers whatever it is given from the journals. One pair (`--partitions 1`): the node's
// server is the pair's, so a hand-back too ends the process (75), after the stop that lets the
// preferred node take over at once. Several pairs: each is served headless and the node's own
// clients are served throughout, so a pair handed back is simply no longer served, and only a
// loss that is not a hand-back ends the process.
public struct NodeLifecycle: Sendable, Equatable {
    /// EX_TEMPFAIL: start me again (as a standby).
    public static let restartStatus: Int32 = 75
    /// The log event of a node that ends after handing its one pair back.
    public static let handedBackEvent = "partition_handed_back"

    public enum Phase: Sendable, Equatable {
        case joining
        case running
        /// A clean stop is under way: what happens from now is part of it.
        case leaving
        /// An exit was asked for; nothing more is done.
        case exited(status: Int32)
    }

    public enum PairState: Sendable, Equatable {
        case recovering(term: UInt64)
        case serving(term: UInt64)
        case handingBack(term: UInt64)
    }

    public enum Event: Sendable, Equatable {
        case joined
        /// Something the node cannot go on without failed: joining, relaying, writing the admin
        /// secret, agreeing on the partition count. `event` names the log line.
        case failed(event: String, detail: String)
        case acquired(pair: Int, term: UInt64)
        case recovered(pair: Int)
        case recoveryFailed(pair: Int, detail: String)
        /// The lease manager reports the pair's lease gone; `handedBack` when it deleted it after
        /// a hand-back.
        case lost(pair: Int, reason: String, handedBack: Bool)
        /// The placement gives the pair to another live node: stop serving it so it can be handed back.
        case handBackDue(pair: Int)
        /// The pair's server has stopped for its hand-back.
        case stoppedForHandBack(pair: Int)
        /// The pair's stream refused an append: another node has written to it.
        case fenced(pair: Int, detail: String)
        /// SIGTERM: hand every lease back and stop.
        case stopRequested
    }

    public enum Action: Sendable, Equatable {
        /// Recover the pair's application from its snapshots and streams and serve it.
        case recover(pair: Int, term: UInt64)
        /// Stop serving the pair (clients told to come back, a final snapshot) before its lease
        /// is deleted; report `stoppedForHandBack` when done.
        case stopForHandBack(pair: Int)
        /// Stop serving everything and hand the leases back (a clean stop; the caller then exits 0).
        case stopEverything
        /// End the process with `status`; `event` and `detail` say why, for the log.
        case exit(status: Int32, event: String, detail: String)

        /// Whether the exit is a failure (logged as an error) rather than a planned step (a
        /// hand-back to the preferred node).
        public var isFailure: Bool {
            guard case .exit(_, let event, _) = self else { return false }
            return event != NodeLifecycle.handedBackEvent
        }
    }

    public private(set) var phase = Phase.joining
    public private(set) var pairs: [Int: PairState] = [:]
    /// Whether the cluster has several pairs (each served headless; a hand-back does not end
    /// the process).
    public let isPartitioned: Bool

    public init(isPartitioned: Bool) {
        self.isPartitioned = isPartitioned
    }

    public var isLeaving: Bool { phase == .leaving }

    /// What to do about `event`.
    public mutating func handle(_ event: Event) -> [Action] {
        if case .exited = phase { return [] }
        switch event {
        case .joined:
            if phase == .joining { phase = .running }
            return []
        case .failed(let name, let detail):
            return exit(Self.restartStatus, name, detail)
        case .acquired(let pair, let term):
            guard phase == .running else { return [] }
            pairs[pair] = .recovering(term: term)
            return [.recover(pair: pair, term: term)]
        case .recovered(let pair):
            guard case .recovering(let term)? = pairs[pair] else { return [] }
            pairs[pair] = .serving(term: term)
            return []
        case .recoveryFailed(let pair, let detail):
            guard !isLeaving else { return [] }
            return exit(Self.restartStatus, "partition_recovery_failed", "cannot recover pair \(pair): \(detail)")
        case .handBackDue(let pair):
            guard !isLeaving, let state = pairs[pair] else { return [] }
            switch state {
            case .serving(let term), .recovering(let term):
                // A pair still recovering is stopped once served: the runner waits for it.
                pairs[pair] = .handingBack(term: term)
                return [.stopForHandBack(pair: pair)]
            case .handingBack:
                return []
            }
        case .stoppedForHandBack:
            return []
        case .lost(let pair, let reason, let handedBack):
            guard !isLeaving else { return [] }
            let state = pairs.removeValue(forKey: pair)
            if handedBack, case .handingBack? = state {
                guard isPartitioned else {
                    return exit(Self.restartStatus, Self.handedBackEvent,
                                "pair \(pair) moved back to its preferred owner; exiting to come back as a standby")
                }
                return []
            }
            return exit(Self.restartStatus, "partition_lost", "lost the lease of pair \(pair) (\(reason)); exiting to come back as a standby")
        case .fenced(let pair, let detail):
            guard !isLeaving else { return [] }
            return exit(Self.restartStatus, "journal_fenced",
                        "\(detail); this node no longer owns pair \(pair), exiting to come back as a standby")
        case .stopRequested:
            guard !isLeaving else { return [] }
            phase = .leaving
            return [.stopEverything]
        }
    }

    private mutating func exit(_ status: Int32, _ event: String, _ detail: String) -> [Action] {
        phase = .exited(status: status)
        return [.exit(status: status, event: event, detail: detail)]
    }
}
