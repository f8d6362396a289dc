// OrderTable: a board shard's orders by id, each held by reference in a box that never changes.
//
// An order is a large value (a few hundred bytes inline: its strings, details, optional
// cancellation and ratings). Held inline in a dictionary, every growth of the table moved all
// of them, and the first change after a snapshot's cut (Durability.swift, "THE CUT": the cut
// copies each shard in O(1), and the owner's next change pays for one copy of what it copied)
// copied every order into freshly faulted pages: hundreds of megabytes with a million orders.
// Held by reference, both move one pointer per order. A box is never written after it is made:
// a change stores a new box, so a copy of the table (a snapshot's) goes on seeing every order
// exactly as it was when the copy was taken, and the copies share the orders neither changed.

/// A board shard's orders by id. A value: copies are independent (and O(1) until one changes).
public struct OrderTable: Sendable {
    /// One order, immutable once made.
    final class Box: Sendable {
        let order: Order

        init(_ order: Order) {
            self.order = order
        }
    }

    private var boxes: [OrderID: Box] = [:]

    public init() {}

    /// The order with this id; setting stores a new box (or removes the order, with nil).
    public subscript(id: OrderID) -> Order? {
        get { boxes[id]?.order }
        set { boxes[id] = newValue.map(Box.init) }
    }

    public var count: Int { boxes.count }
    public var isEmpty: Bool { boxes.isEmpty }

    /// Every order id, in no particular order.
    public var keys: some Collection<OrderID> { boxes.keys }

    /// Every order, in no particular order.
    public var values: some Collection<Order> { boxes.values.lazy.map(\.order) }

    /// Calls `body` with every order by ascending id (the order snapshots store them in); sorts
    /// references, not orders.
    public func forEachByID(_ body: (Order) throws -> Void) rethrows {
        for (_, box) in boxes.sorted(by: { $0.key < $1.key }) { try body(box.order) }
    }
}

extension OrderTable: Equatable {
    public static func == (lhs: OrderTable, rhs: OrderTable) -> Bool {
        guard lhs.boxes.count == rhs.boxes.count else { return false }
        for (id, box) in lhs.boxes {
            guard let other = rhs.boxes[id] else { return false }
            if box !== other && box.order != other.order { return false }
        }
        return true
    }
}
