// BoardShard: one slice of one order type's board — the owner of the orders in it.
//
// Theory of operation. The server splits each order type's board into `shardsPerType` shards
// (see `BoardLayout`) and confines each shard to its own serial queue; a shard is a plain value
// and is never shared between queues. A shard owns every order whose `OrderID.shard` is its
// index while it is live or recently closed (closed orders move to the archive once their rating
// window has passed: `decideMoveToArchive`), so any command naming one is routed by the id alone, and
// the "exactly one winner" rule of accept needs no lock: accepts on one order are decided one
// after another on the shard's queue, and the first `apply` makes the order non-open, so every
// later decide sees it taken.
//
// Changes follow the domain's decide → event → apply rule:
//   - `decidePublish` / `decide(_:on:by:now:rules:)` / `dueTransitions(now:)` check a command
//     (or the clock) against the state and return an `OrderEvent` or a `DomainError`; they
//     never mutate.
//   - `apply(_:)` is the only mutation. It cannot fail: an event that does not fit the state
//     means the journal and the state disagree, which traps as an internal inconsistency.
// Everything `apply` needs is inside the event (the allocated id, a fee, an auto-confirm
// time, a delivery code drawn from the caller's random source), so replaying the journal
// into an empty shard reproduces the state exactly, whatever the configuration is by then.
//
// Indexes (open orders, per-user published / running / joined, orders with a timer) are
// derived data: `apply` keeps them in step, snapshots leave them out and decoding rebuilds
// them; the open and timed ones are bitsets over the shard's serials (OrderIDSet.swift).
// Time-driven transitions (expiry, auto-confirm, a group's closing time and its end) are events
// too: the server asks `nextDueTime` when to wake up and `dueTransitions(now:)` what happened;
// after downtime the first call simply returns everything overdue. An order is one reference to
// its fields (Order.swift), so growing the table, and the one copy a snapshot's cut costs the
// next change, move pointers rather than orders (OrderTable.swift).
//
// Decisions a reader might question:
//   - Delivery code: the runner gives it with `deliver`, and the order goes straight to
//     completed (the code is the publisher's confirmation); orders without one wait in
//     `delivered` for the publisher or for auto-confirm.
//   - Accept deciding at or after the deadline says order_closed even before the expiry event
//     is applied, so a late timer never lets a runner take an expired order.
//   - A group's `closesAt` ends joining and leaving: below quorum it cancels, with nobody it
//     expires, otherwise it turns `full` (off the board) and completes at its deadline.

/// The orders of one board shard, with the indexes its queries need. Confine to one queue.
public struct BoardShard: Equatable, Sendable {
    /// This shard's index; every order it owns has `id.shard == index`.
    public let index: Int
    /// The serials this shard's board partition hands out: every serial on one partition; on
    /// partition `n` of `P`, those congruent to `n` mod `P`, so an order's id names its partition
    /// (IDSpace.swift). A setting of the deployment, not stored in a snapshot.
    public let serials: IDSpace
    /// Where the next published order's serial is looked for: it gets the first serial of
    /// `serials` from here. Serials are never reused.
    public private(set) var nextSerial: UInt64 = 1
    /// Every order of the shard: live ones, and closed ones until they move to the archive.
    public private(set) var orders = OrderTable()

    var openIDs: OrderIDSet
    var publishedBy: [UserID: Set<OrderID>] = [:]
    var runningBy: [UserID: Set<OrderID>] = [:]
    var joinedBy: [UserID: Set<OrderID>] = [:]
    /// Orders the clock may still change (open, full, delivered).
    var timedIDs: OrderIDSet
    /// The minimum `nextDueTime` over `timedIDs`, maintained by `index`.
    var earliestDue: Timestamp?

    public init(index: Int, serials: IDSpace = .all) {
        precondition(index >= 0 && UInt64(index) < (1 << OrderID.shardBits), "shard index out of range")
        self.index = index
        self.serials = serials
        openIDs = OrderIDSet(shard: index, serials: serials)
        timedIDs = OrderIDSet(shard: index, serials: serials)
    }

    /// The id the next published order gets.
    public var nextOrderID: OrderID { OrderID(shard: index, serial: serials.firstID(atLeast: nextSerial)) }

    /// The order with this id, if this shard owns it.
    public func order(_ id: OrderID) -> Order? { orders[id] }

    /// The number of orders currently on the board.
    public var openCount: Int { openIDs.count }

    /// Applies an event decided against this state (or read from the journal). The returned
    /// before/after pair is what the server needs to build pushes and feed deltas.
    @discardableResult
    public mutating func apply(_ event: OrderEvent) -> AppliedOrderChange {
        guard event.orderID.shard == index else {
            fatalError("internal inconsistency in BoardShard.apply: order \(event.orderID) is not in shard \(index)")
        }
        if case .published(var order) = event.change {
            guard orders[order.id] == nil else {
                fatalError("internal inconsistency in BoardShard.apply: order \(order.id) published twice")
            }
            order.revision = 1
            order.refreshSearchText()
            nextSerial = max(nextSerial, order.id.serial + 1)
            orders[order.id] = order
            index(nil, order)
            return AppliedOrderChange(event: event, before: nil, after: order)
        }
        guard let before = orders[event.orderID] else {
            fatalError("internal inconsistency in BoardShard.apply: unknown order \(event.orderID)")
        }
        if case .movedToArchive = event.change {
            remove(before)
            return AppliedOrderChange(event: event, before: before, after: before)
        }
        var after = before
        after.applying(event)
        after.revision += 1
        orders[event.orderID] = after
        index(before, after)
        return AppliedOrderChange(event: event, before: before, after: after)
    }

    private mutating func index(_ before: Order?, _ after: Order) {
        let id = after.id
        if before == nil { publishedBy[after.publisher, default: []].insert(id) }
        if after.isListed { openIDs.insert(id) } else { openIDs.remove(id) }
        let oldDue = before?.nextDueTime, newDue = after.nextDueTime
        if newDue != nil { timedIDs.insert(id) } else { timedIDs.remove(id) }
        if oldDue != newDue {
            if let oldDue, oldDue == earliestDue {
                // The earliest timer moved: rescan (once per fired or cancelled earliest timer).
                earliestDue = scanEarliestDue()
            } else if let newDue, earliestDue.map({ newDue < $0 }) ?? true {
                earliestDue = newDue
            }
        }
        if before?.runner != after.runner {
            if let old = before?.runner { Self.remove(id, of: old, from: &runningBy) }
            if let new = after.runner { runningBy[new, default: []].insert(id) }
        }
        if before?.participants != after.participants {
            for user in before?.participants ?? [] { Self.remove(id, of: user, from: &joinedBy) }
            for user in after.participants { joinedBy[user, default: []].insert(id) }
        }
    }

    /// Takes a closed order and its index entries out of the shard (a closed order is neither
    /// listed nor timed, so only the per-user indexes hold it).
    private mutating func remove(_ order: Order) {
        guard order.status.isTerminal else {
            fatalError("internal inconsistency in BoardShard.apply: order \(order.id) moved to the archive while \(order.status.rawValue)")
        }
        let id = order.id
        orders[id] = nil
        openIDs.remove(id)
        timedIDs.remove(id)
        Self.remove(id, of: order.publisher, from: &publishedBy)
        if let runner = order.runner { Self.remove(id, of: runner, from: &runningBy) }
        for user in order.participants { Self.remove(id, of: user, from: &joinedBy) }
    }

    /// Drops emptied entries, so an index built by replay equals one rebuilt from a snapshot.
    private static func remove(_ id: OrderID, of user: UserID, from index: inout [UserID: Set<OrderID>]) {
        index[user]?.remove(id)
        if index[user]?.isEmpty == true { index[user] = nil }
    }
}

extension BoardShard: Codable {
    private enum CodingKeys: String, CodingKey { case index, nextSerial, orders }

    /// Snapshots hold the orders only; the indexes are rebuilt on decoding.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(nextSerial, forKey: .nextSerial)
        var list = container.nestedUnkeyedContainer(forKey: .orders)
        try orders.forEachByID { try list.encode($0) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let index = try container.decode(Int.self, forKey: .index)
        let nextSerial = try container.decode(UInt64.self, forKey: .nextSerial)
        guard let shard = BoardShard(index: index, nextSerial: nextSerial,
                                     restoring: try container.decode([Order].self, forKey: .orders)) else {
            throw DecodingError.dataCorruptedError(forKey: .orders, in: container,
                                                   debugDescription: "shard \(index) is out of range or holds an order that does not belong to it")
        }
        self = shard
    }

    /// This shard as one of a board partition that hands out `space`'s serials, its orders kept;
    /// nil when one of them is not of `space` (a snapshot of another partition).
    public func handingOut(_ space: IDSpace) -> BoardShard? {
        guard space != serials else { return self }
        return BoardShard(index: index, nextSerial: nextSerial, restoring: Array(orders.values), serials: space)
    }

    /// A shard as a snapshot holds it, its indexes rebuilt; nil if the index is out of range or
    /// an order belongs to another shard (or another partition's `serials`) or appears twice.
    public init?(index: Int, nextSerial: UInt64, restoring orders: [Order], serials: IDSpace = .all) {
        guard index >= 0, UInt64(index) < (1 << OrderID.shardBits) else { return nil }
        self.init(index: index, serials: serials)
        self.nextSerial = nextSerial
        for var order in orders {
            order.refreshSearchText()
            guard order.id.shard == index, serials.contains(order.id.serial), self.orders[order.id] == nil else { return nil }
            self.orders[order.id] = order
            self.index(nil, order)
        }
    }
}

extension Order {
    /// The state change of one event. Only `BoardShard.apply` calls it, after the decide step
    /// has checked that the event fits.
    mutating func applying(_ event: OrderEvent) {
        let at = event.at
        switch event.change {
        case .published:
            fatalError("internal inconsistency in Order.applying: publish of an existing order")
        case .accepted(let runner):
            status = .accepted
            self.runner = runner
            acceptedAt = at
            timeline.append(TimelineEntry(status: .accepted, at: at, actor: runner))
        case .progressed(let next):
            status = next
            timeline.append(TimelineEntry(status: next, at: at, actor: event.actor))
        case .delivered(let confirmAt):
            timeline.append(TimelineEntry(status: .delivered, at: at, actor: event.actor))
            if let confirmAt {
                status = .delivered
                autoConfirmAt = confirmAt
            } else {
                status = .completed
                timeline.append(TimelineEntry(status: .completed, at: at, actor: event.actor,
                                              note: "delivery code confirmed"))
            }
        case .confirmed(let automatic):
            status = .completed
            autoConfirmAt = nil
            timeline.append(TimelineEntry(status: .completed, at: at, actor: event.actor,
                                          note: automatic ? "auto-confirmed" : nil))
        case .abandoned(let former):
            status = .open
            runner = nil
            acceptedAt = nil
            timeline.append(TimelineEntry(status: .open, at: at, actor: former, note: "runner gave it back"))
        case .cancelled(let cancellation):
            status = .cancelled
            self.cancellation = cancellation
            timeline.append(TimelineEntry(status: .cancelled, at: at, actor: event.actor,
                                          note: cancellation.reason ?? (cancellation.cause == .quorumNotReached
                                                                        ? "quorum not reached" : nil)))
        case .expired:
            status = .expired
            timeline.append(TimelineEntry(status: .expired, at: at, actor: nil))
        case .tipRaised(let newTip):
            tip = newTip
        case .joined(let user):
            participants.append(user)
            if let group = groupDetails, participants.count >= group.capacity {
                status = .full
                timeline.append(TimelineEntry(status: .full, at: at, actor: user))
            }
        case .left(let user):
            participants.removeAll { $0 == user }
            if status == .full {
                status = .open
                timeline.append(TimelineEntry(status: .open, at: at, actor: user))
            }
        case .closedForJoining:
            status = .full
            timeline.append(TimelineEntry(status: .full, at: at, actor: nil, note: "closing time reached"))
        case .groupCompleted(let automatic):
            status = .completed
            timeline.append(TimelineEntry(status: .completed, at: at, actor: event.actor,
                                          note: automatic ? "closed at the deadline" : nil))
        case .rated(let byPublisher, let rating):
            if byPublisher { ratingByPublisher = rating } else { ratingByRunner = rating }
        case .movedToArchive:
            fatalError("internal inconsistency in Order.applying: a move to the archive changes no order")
        }
    }
}
