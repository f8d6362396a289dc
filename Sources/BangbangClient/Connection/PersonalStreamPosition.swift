// The rule that the app sees its personal stream in order and once: every event is admitted
// only if it is the next one; what came before is a duplicate (a replay overlapping what was
// delivered), what skips ahead is a gap (which a resume from the last delivered event fills).

struct PersonalStreamPosition: Sendable, Hashable {
    enum Verdict: Sendable, Hashable {
        case deliver
        case duplicate
        /// Events between the last delivered one and this are missing.
        case gap(expected: Int64)
    }

    /// `seq` of the last event handed to the app (or the position given by a login or resync).
    private(set) var delivered: Int64

    init(delivered: Int64) { self.delivered = delivered }

    mutating func admit(_ seq: Int64) -> Verdict {
        if seq <= delivered { return .duplicate }
        if seq != delivered + 1 { return .gap(expected: delivered + 1) }
        delivered = seq
        return .deliver
    }

    /// Takes the position an `auth.resume` reply gives, after its replay. Returns true when the
    /// app must refetch: the server said `resync`, or the replay did not end where the server's
    /// stream is (events were lost to the retention, or the server's history was reset).
    mutating func settle(resumedAt seq: Int64, resync: Bool) -> Bool {
        let isBroken = resync || seq != delivered
        delivered = seq
        return isBroken
    }
}
