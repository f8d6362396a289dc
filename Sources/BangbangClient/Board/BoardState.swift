// The open orders of a subscription, kept in step with the feed: a pure value, fed the
// subscription's list and then its events, so the rules are tested without a server.
//
// The rules (protocol/events.md, "The board feed"; operations-orders.md, board.subscribe):
// - A list (`reset`) replaces everything; it carries each board's feed position, and events at
//   or below a board's position are already reflected in it: they are skipped.
// - `entered` / `updated` put the order in unless the list already holds it at the same or a
//   higher revision (an order that changed while the list was made can be in both).
// - `left` takes it out.
// - The list is kept sorted as the subscription's filter sorts it, ties by id.

/// The open orders a subscription shows, and how many match in all.
public struct BoardState: Sendable, Hashable {
    public let filter: BoardFilter
    /// Sorted per `filter.sort`.
    public private(set) var orders: [Order] = []
    /// Every open order matching the filter (the list may hold fewer: the first list is capped).
    public private(set) var total = 0
    /// Each board's feed position already reflected.
    public private(set) var positions: [OrderType: Int64] = [:]
    /// Whether a list has arrived since the last interruption.
    public private(set) var isCurrent = false

    public init(filter: BoardFilter) { self.filter = filter }

    /// Starts over from a subscription's list.
    public mutating func reset(to snapshot: BoardSnapshot) {
        orders = snapshot.orders
        total = snapshot.total
        positions = snapshot.seq
        isCurrent = true
        sort()
    }

    /// The connection dropped: the list stays on screen but may be stale until the next `reset`.
    public mutating func interrupt() { isCurrent = false }

    /// Applies one feed event; returns whether the list changed.
    @discardableResult
    public mutating func apply(_ event: BoardFeedEvent) -> Bool {
        guard isCurrent else { return false }
        if let position = positions[event.board], event.seq <= position { return false }
        positions[event.board] = event.seq
        switch event.change {
        case .entered(let order):
            return upsert(order, counts: true)
        case .updated(let order):
            return upsert(order, counts: false)
        case .left(let id, _):
            guard let index = orders.firstIndex(where: { $0.id == id }) else {
                // Listed by the server but beyond our first page: it still counted.
                total = max(0, total - 1)
                return false
            }
            orders.remove(at: index)
            total = max(0, total - 1)
            return true
        }
    }

    private mutating func upsert(_ order: Order, counts: Bool) -> Bool {
        if let index = orders.firstIndex(where: { $0.id == order.id }) {
            guard orders[index].revision < order.revision else { return false }
            orders[index] = order
        } else {
            orders.append(order)
            if counts { total += 1 }
        }
        sort()
        return true
    }

    private mutating func sort() {
        switch filter.sort ?? .newest {
        case .newest:
            orders.sort { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        case .tip:
            orders.sort { $0.tip != $1.tip ? $0.tip > $1.tip : $0.id < $1.id }
        case .deadline:
            orders.sort { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        }
    }
}
