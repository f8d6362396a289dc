// Time-driven transitions: expiry, auto-confirm, group quorum and group end.

extension BoardShard {
    /// The earliest time at which `dueTransitions(now:)` will have something to return, or nil
    /// if no order of this shard waits for the clock. The server arms one timer per shard.
    /// O(1): kept up to date by `apply`.
    public var nextDueTime: Timestamp? { earliestDue }

    func scanEarliestDue() -> Timestamp? {
        var earliest: Timestamp?
        for id in timedIDs {
            guard let due = orders[id]?.nextDueTime else { continue }
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    /// The events of everything whose time has come at `now` (inclusive: an order with deadline
    /// T expires at T, not after). Each event is stamped with the moment it was due, so after
    /// downtime the timeline still says when it happened. Apply them all, in the returned order
    /// (by due time, then id); transitions never depend on each other, so one call suffices.
    public func dueTransitions(now: Timestamp) -> [OrderEvent] {
        var events: [OrderEvent] = []
        for id in timedIDs {
            guard let order = orders[id], let due = order.nextDueTime, due <= now,
                  let change = Self.dueChange(of: order, at: due) else { continue }
            events.append(OrderEvent(orderID: id, at: due, actor: nil, change: change,
                                     notify: Array(Set(order.parties)).sorted()))
        }
        events.sort { ($0.at, $0.orderID) < ($1.at, $1.orderID) }
        return events
    }

    private static func dueChange(of order: Order, at due: Timestamp) -> OrderChange? {
        switch order.status {
        case .delivered:
            return .confirmed(automatic: true)
        case .open:
            guard let group = order.groupDetails else { return .expired }
            // The closing time: below quorum it cancels, with nobody it expires, else it stops
            // taking participants (and completes at once if the deadline is the same moment).
            if let quorum = group.minimumFill, order.participants.count < quorum {
                return .cancelled(Cancellation(cause: .quorumNotReached, reason: nil, fee: 0, runner: nil))
            }
            if order.participants.isEmpty { return .expired }
            return due >= order.deadline ? .groupCompleted(automatic: true) : .closedForJoining
        case .full:
            return .groupCompleted(automatic: true)
        default:
            return nil
        }
    }
}

extension BoardShard {
    /// The event that takes order `id` out of memory, or nil while it must stay: it is not
    /// closed, its rating window (counted from `closedAt`) is still open, or the archive holds
    /// an older revision than memory (a rating came in after it was stored).
    public func decideMoveToArchive(_ id: OrderID, archivedRevision: Int, now: Timestamp,
                                    rules: OrderRules) -> OrderEvent? {
        guard let order = orders[id], order.revision == archivedRevision, let closedAt = order.closedAt,
              now >= closedAt.adding(milliseconds: rules.ratingWindow) else { return nil }
        return OrderEvent(orderID: id, at: now, actor: nil, change: .movedToArchive, notify: [])
    }
}
