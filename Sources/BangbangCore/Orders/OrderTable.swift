// OrderTable: a board shard's orders by id.
//
// An order is one reference to its fields (Order.swift), so growing the table, and the copy the
// first change after a snapshot's cut makes of it (Durability.swift, "THE CUT": the cut copies
// each shard in O(1), and the owner's next change pays for one copy of what it copied), move a
// pointer per order rather than the order's few hundred bytes. A change never writes into an
// order the table shares with a copy: the order's storage is copied first (copy-on-write), so a
// copy of the table (a snapshot's) goes on seeing every order exactly as it was when the copy
// was taken, and the copies share the orders neither changed.

/// A board shard's orders by id. A value: copies are independent (and O(1) until one changes).
public struct OrderTable: Sendable {
    private var orders: [OrderID: Order] = [:]

    public init() {}

    /// The order with this id; setting nil removes it.
    public subscript(id: OrderID) -> Order? {
        get { orders[id] }
        set { orders[id] = newValue }
    }

    public var count: Int { orders.count }
    public var isEmpty: Bool { orders.isEmpty }

    /// Every order id, in no particular order.
    public var keys: some Collection<OrderID> { orders.keys }

    /// Every order, in no particular order.
    public var values: some Collection<Order> { orders.values }

    /// Calls `body` with every order by ascending id (the order snapshots store them in). Sorts
    /// the ids with their places in the table, not the orders: copying a million orders into
    /// a sorted array retained each one, a cache miss apiece, long before it was written.
    public func forEachByID(_ body: (Order) throws -> Void) rethrows {
        var places: [(id: OrderID, index: [OrderID: Order].Index)] = []
        places.reserveCapacity(orders.count)
        var index = orders.startIndex
        while index != orders.endIndex {
            places.append((orders.keys[index], index))
            orders.formIndex(after: &index)
        }
        places.sort { $0.id < $1.id }
        for place in places { try body(orders.values[place.index]) }
    }
}

extension OrderTable: Equatable {}
