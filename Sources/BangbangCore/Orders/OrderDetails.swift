// Per-type details of an order (product brief, "The four order types").

/// Parcel size of an express order; runners pick orders they can carry.
public enum ParcelSize: String, CaseIterable, Codable, Hashable, Sendable {
    case small, medium, large
}

/// 代取快递: pick up a parcel at a station and bring it to the publisher.
public struct ExpressDetails: Codable, Hashable, Sendable {
    public var pickupStation: String
    /// Private: shown only to the publisher and the assigned runner.
    public var pickupCode: String?
    public var parcelSize: ParcelSize
    public var dropOffPlace: String
    /// Private: shown only to the publisher and the assigned runner.
    public var dropOffRoom: String?
    /// Private: shown only to the publisher and the assigned runner.
    public var contactPhone: String?

    public init(pickupStation: String, pickupCode: String?, parcelSize: ParcelSize,
                dropOffPlace: String, dropOffRoom: String?, contactPhone: String?) {
        self.pickupStation = pickupStation
        self.pickupCode = pickupCode
        self.parcelSize = parcelSize
        self.dropOffPlace = dropOffPlace
        self.dropOffRoom = dropOffRoom
        self.contactPhone = contactPhone
    }
}

/// One line of a purchase order.
public struct PurchaseItem: Codable, Hashable, Sendable {
    public var name: String
    /// 1…99: a shopping errand, not a wholesale run.
    public var quantity: Int
    public var note: String?

    /// On the wire the quantity is `qty`, the name validation errors use (`items[2].qty`).
    private enum CodingKeys: String, CodingKey {
        case name
        case quantity = "qty"
        case note
    }

    public init(name: String, quantity: Int, note: String? = nil) {
        self.name = name
        self.quantity = quantity
        self.note = note
    }
}

/// 代购配送: buy goods and deliver them; the runner advances the goods budget.
public struct PurchaseDetails: Codable, Hashable, Sendable {
    public var items: [PurchaseItem]
    /// A named store, or nil for "any store".
    public var store: String?
    public var goodsBudget: Cents
    public var dropOffPlace: String
    /// Private: shown only to the publisher and the assigned runner.
    public var dropOffRoom: String?

    public init(items: [PurchaseItem], store: String?, goodsBudget: Cents,
                dropOffPlace: String, dropOffRoom: String?) {
        self.items = items
        self.store = store
        self.goodsBudget = goodsBudget
        self.dropOffPlace = dropOffPlace
        self.dropOffRoom = dropOffRoom
    }
}

/// 悬赏任务: any task for a reward (the order's tip).
public struct BountyDetails: Codable, Hashable, Sendable {
    public var title: String
    public var description: String
    public var place: String?

    public init(title: String, description: String, place: String? = nil) {
        self.title = title
        self.description = description
        self.place = place
    }
}

/// What a group order gathers people for.
public enum GroupKind: String, CaseIterable, Codable, Hashable, Sendable {
    case carpool
    case groupBuy = "group_buy"
}

/// 拼车拼团: several participants share a ride or a purchase.
///
/// `closesAt` is the departure (carpool) or closing (group buy) time: joining and leaving stop
/// then, and if `minimumFill` is set and not reached the order cancels itself. `capacity`
/// counts the shares offered to others; the publisher does not hold one.
public struct GroupDetails: Codable, Hashable, Sendable {
    public var kind: GroupKind
    /// The route of a carpool or the item of a group buy.
    public var subject: String
    public var closesAt: Timestamp
    /// 2…50 shares.
    public var capacity: Int
    /// The quorum, 1…capacity, or nil when any number of participants will do.
    public var minimumFill: Int?
    public var pricePerShare: Cents

    public init(kind: GroupKind, subject: String, closesAt: Timestamp, capacity: Int,
                minimumFill: Int? = nil, pricePerShare: Cents) {
        self.kind = kind
        self.subject = subject
        self.closesAt = closesAt
        self.capacity = capacity
        self.minimumFill = minimumFill
        self.pricePerShare = pricePerShare
    }
}

/// The type-specific part of an order; its case fixes the order's `OrderType`.
public enum OrderDetails: Codable, Hashable, Sendable {
    case express(ExpressDetails)
    case purchase(PurchaseDetails)
    case bounty(BountyDetails)
    case group(GroupDetails)

    public var type: OrderType {
        switch self {
        case .express: .express
        case .purchase: .purchase
        case .bounty: .bounty
        case .group: .group
        }
    }

    /// The same details with every private field removed, for viewers other than the two parties.
    public var redacted: OrderDetails {
        switch self {
        case .express(var express):
            express.pickupCode = nil
            express.dropOffRoom = nil
            express.contactPhone = nil
            return .express(express)
        case .purchase(var purchase):
            purchase.dropOffRoom = nil
            return .purchase(purchase)
        case .bounty, .group:
            return self
        }
    }

    /// The public text a keyword search looks at, lowercased once at publish time: the parts
    /// joined by newlines, gathered into one string sized up front (every publish computes it
    /// twice).
    var searchText: String {
        var length = 0
        var count = 0
        forEachSearchedPart {
            length += $0.utf8.count
            count += 1
        }
        var text = ""
        text.reserveCapacity(length + max(0, count - 1))
        var isFirst = true
        forEachSearchedPart { part in
            if !isFirst { text += "\n" }
            text += part
            isFirst = false
        }
        return text.lowercased()
    }

    /// The searched fields, in order; an absent optional one is an empty part.
    private func forEachSearchedPart(_ body: (String) -> Void) {
        switch self {
        case .express(let express):
            body(express.pickupStation)
            body(express.dropOffPlace)
        case .purchase(let purchase):
            for item in purchase.items { body(item.name) }
            body(purchase.store ?? "")
            body(purchase.dropOffPlace)
            for item in purchase.items { if let note = item.note { body(note) } }
        case .bounty(let bounty):
            body(bounty.title)
            body(bounty.description)
            body(bounty.place ?? "")
        case .group(let group):
            body(group.subject)
        }
    }
}
