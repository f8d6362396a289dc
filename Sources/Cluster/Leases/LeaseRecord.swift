// What one lease key holds, and how long leases last.
//
// The value of key `p<n>` in the leases bucket names the holding node and its term. A term is
// the KV revision of the write that took the lease: unique across the bucket and increasing, so
// two tenures of one partition never share a term, even by the same node. The taking write
// cannot know its own revision, so it says 0 ("this entry's revision") and renewals carry the
// number. Expiry is never read from the value: each reader times how long it has seen the same
// revision on its own monotonic clock, so no two nodes' clocks are ever compared.
import JSON

/// The contents of a lease key.
public struct LeaseRecord: Sendable, Equatable {
    /// The holding node.
    public var node: String
    /// The revision of the write that took the lease, or 0 in that write itself.
    public var term: UInt64
    /// How long the holder's renewal counts for: readers expire the lease after watching its
    /// revision unchanged this long.
    public var durationMilliseconds: Int64
    /// The last journal sequence the holder knew of (for operators; the fence is the stream's).
    public var journalSequence: UInt64

    public init(node: String, term: UInt64, durationMilliseconds: Int64, journalSequence: UInt64 = 0) {
        self.node = node
        self.term = term
        self.durationMilliseconds = durationMilliseconds
        self.journalSequence = journalSequence
    }

    /// The term of the entry stored at `revision`.
    public func term(atRevision revision: UInt64) -> UInt64 { term == 0 ? revision : term }

    public func encoded() -> [UInt8] {
        JSONWriter.encode([
            "node": .string(node),
            "term": .integer(Int64(clamping: term)),
            "lease_ms": .integer(durationMilliseconds),
            "journal": .integer(Int64(clamping: journalSequence)),
        ])
    }

    /// Nil for a value that is not a lease record (written by something else): such a key is
    /// treated as held by nobody known, and expires like any other.
    public init?(decoding bytes: [UInt8]) {
        guard let value = try? JSONParser.parse(bytes),
              case .string(let node)? = value["node"], !node.isEmpty,
              case .integer(let term)? = value["term"], term >= 0,
              case .integer(let duration)? = value["lease_ms"], duration > 0 else { return nil }
        self.node = node
        self.term = UInt64(term)
        durationMilliseconds = duration
        if case .integer(let journal)? = value["journal"], journal >= 0 { journalSequence = UInt64(journal) } else { journalSequence = 0 }
    }
}

/// How leases are timed. Every node of a deployment should use the same values.
public struct LeaseConfiguration: Sendable, Equatable {
    /// L: a lease not renewed for this long (with the bucket answering) is taken over. Six
    /// seconds: a dead node's partitions are served again within L plus replay, and a loss of
    /// the one NATS server that leads both the leases and the heartbeats buckets (which the owner
    /// undoes within seconds, ClusterNode) is still survived when its elections end within L.
    /// An election of the leases bucket alone costs nothing at any L from `shortestDuration`.
    public var duration: Duration
    /// A node that joins (or comes back) must have been live this long before a holder hands it
    /// the partitions the placement gives it, so a flapping node does not make partitions bounce.
    /// At least `duration`: a node that died just after its last heartbeat is not live that long.
    public var handBackGrace: Duration
    /// Partitions one node hands back per round, so a returning node is not flooded at once;
    /// 0: a holder never hands a partition back (partitions stay where they are until a holder
    /// stops or dies).
    public var handBacksPerRound: Int
    /// How many lease times a live holder's lease lasts unrenewed, counted only while the leases
    /// bucket answers the node that times it (3). The holder itself stops after one lease time
    /// of answers without a renewal; the other two leave room for the holder hearing the bucket
    /// answer again later than others do (its requests are bounded by `writeTimeoutMilliseconds`
    /// and made every tick). 1: a live holder's lease lasts as long as anyone's.
    public var liveHolderMultiple: Int

    public init(duration: Duration = .seconds(6), handBackGrace: Duration? = nil, handBacksPerRound: Int = 1,
                liveHolderMultiple: Int = 3) {
        precondition(duration > .zero, "a lease lasts some time")
        precondition(liveHolderMultiple >= 1, "a live holder's lease lasts at least one lease time")
        self.liveHolderMultiple = liveHolderMultiple
        self.duration = duration
        self.handBackGrace = handBackGrace ?? duration
        precondition(self.handBackGrace >= duration, "the hand-back grace is at least one lease time")
        precondition(handBacksPerRound >= 0, "a node cannot hand back a negative number of partitions")
        self.handBacksPerRound = handBacksPerRound
    }

    /// The shortest lease a deployment may use (the server's `--lease-ms` refuses less). A
    /// holder stays live in its own eyes and the others' only while a heartbeat lands within
    /// every L: heartbeats are written every L/3, the attempt lost with a NATS server waits out
    /// its bound (250 ms at least) and the next comes a tick later, so at L = 1 s about 250 ms
    /// are left for a busy machine's delays and a reconnection to another server; below that a
    /// holder can lose its partitions to the loss of the NATS server it is connected to.
    public static let shortestDuration: Duration = .seconds(1)

    /// L/3: a holder renews three times per lease, so two lost renewals in a row are survived.
    public var renewInterval: Duration { duration / 3 }

    /// How often a node looks at its leases: a quarter of the renewal interval.
    public var tickInterval: Duration { duration / 12 }

    /// Bound on one lease or heartbeat write (L/4, within 250 ms and 2 s): a write lost with a
    /// NATS server, or waiting on a bucket's leader election, gives way to the next tick's
    /// attempt long before the lease runs out, instead of holding the writes for the API's 5 s.
    public var writeTimeoutMilliseconds: Int { Int(min(2_000, max(250, durationMilliseconds / 4))) }

    var durationMilliseconds: Int64 {
        let parts = duration.components
        return parts.seconds * 1_000 + parts.attoseconds / 1_000_000_000_000_000
    }
}
