// The four order types' own fields (protocol/orders.md, "The four types"), used both in orders
// the server sends and in drafts to publish. Members marked private reach only the publisher and
// the assigned runner: in anyone else's copy they are nil.
import JSON

/// An order's type-specific fields; the case is the order's type.
public enum OrderDetails: Sendable, Hashable {
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

    init(wire value: JSONValue, type: OrderType, at path: FieldPath) throws(DecodingFailure) {
        switch type {
        case .express: self = .express(try ExpressDetails(wire: value, at: path))
        case .purchase: self = .purchase(try PurchaseDetails(wire: value, at: path))
        case .bounty: self = .bounty(try BountyDetails(wire: value, at: path))
        case .group: self = .group(try GroupDetails(wire: value, at: path))
        }
    }

    var wireValue: JSONValue {
        switch self {
        case .express(let details): details.wireValue
        case .purchase(let details): details.wireValue
        case .bounty(let details): details.wireValue
        case .group(let details): details.wireValue
        }
    }
}

/// 代取快递: pick a parcel up at a station and bring it over.
public struct ExpressDetails: Sendable, Hashable, WireDecodable {
    public var pickupStation: String
    /// Private: the code the station asks for.
    public var pickupCode: String?
    /// Absent on the wire means `small`.
    public var parcelSize: ParcelSize
    public var dropOffPlace: String
    /// Private.
    public var dropOffRoom: String?
    /// Private. E.164 (`+8613800138000`) or a bare mainland mobile number; replies give E.164.
    public var contactPhone: String?

    public init(pickupStation: String, pickupCode: String? = nil, parcelSize: ParcelSize = .small,
                dropOffPlace: String, dropOffRoom: String? = nil, contactPhone: String? = nil) {
        self.pickupStation = pickupStation
        self.pickupCode = pickupCode
        self.parcelSize = parcelSize
        self.dropOffPlace = dropOffPlace
        self.dropOffRoom = dropOffRoom
        self.contactPhone = contactPhone
    }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        pickupStation = try object.required("pickup_station")
        pickupCode = try object.optional("pickup_code")
        parcelSize = try object.optional("parcel_size") ?? .small
        dropOffPlace = try object.required("drop_off_place")
        dropOffRoom = try object.optional("drop_off_room")
        contactPhone = try object.optional("contact_phone")
        object.finish()
    }

    var wireValue: JSONValue {
        var object = WireObjectBuilder()
        object["pickup_station"] = .string(pickupStation)
        object["pickup_code"] = pickupCode.map(JSONValue.string)
        object["parcel_size"] = parcelSize.wireValue
        object["drop_off_place"] = .string(dropOffPlace)
        object["drop_off_room"] = dropOffRoom.map(JSONValue.string)
        object["contact_phone"] = contactPhone.map(JSONValue.string)
        return object.value
    }
}

/// 代购配送: buy goods (the runner advances the money) and deliver them.
public struct PurchaseDetails: Sendable, Hashable, WireDecodable {
    public var items: [PurchaseItem]
    /// nil: any store.
    public var store: String?
    /// Fen the runner advances for the goods; absent on the wire means 0.
    public var goodsBudget: Int
    public var dropOffPlace: String
    /// Private.
    public var dropOffRoom: String?

    public init(items: [PurchaseItem], store: String? = nil, goodsBudget: Int = 0, dropOffPlace: String,
                dropOffRoom: String? = nil) {
        self.items = items
        self.store = store
        self.goodsBudget = goodsBudget
        self.dropOffPlace = dropOffPlace
        self.dropOffRoom = dropOffRoom
    }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        items = try object.required("items")
        store = try object.optional("store")
        goodsBudget = try object.optional("goods_budget") ?? 0
        dropOffPlace = try object.required("drop_off_place")
        dropOffRoom = try object.optional("drop_off_room")
        object.finish()
    }

    var wireValue: JSONValue {
        var object = WireObjectBuilder()
        object["items"] = .array(items.map(\.wireValue))
        object["store"] = store.map(JSONValue.string)
        object["goods_budget"] = .integer(Int64(goodsBudget))
        object["drop_off_place"] = .string(dropOffPlace)
        object["drop_off_room"] = dropOffRoom.map(JSONValue.string)
        return object.value
    }
}

public struct PurchaseItem: Sendable, Hashable, WireDecodable {
    public var name: String
    /// 1–99.
    public var quantity: Int
    public var note: String?

    public init(name: String, quantity: Int = 1, note: String? = nil) {
        self.name = name
        self.quantity = quantity
        self.note = note
    }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        name = try object.required("name")
        quantity = try object.required("qty")
        note = try object.optional("note")
        object.finish()
    }

    var wireValue: JSONValue {
        var object = WireObjectBuilder()
        object["name"] = .string(name)
        object["qty"] = .integer(Int64(quantity))
        object["note"] = note.map(JSONValue.string)
        return object.value
    }
}

/// 悬赏任务: a task for a reward.
public struct BountyDetails: Sendable, Hashable, WireDecodable {
    public var title: String
    public var description: String
    public var place: String?

    public init(title: String, description: String, place: String? = nil) {
        self.title = title
        self.description = description
        self.place = place
    }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        title = try object.required("title")
        description = try object.required("description")
        place = try object.optional("place")
        object.finish()
    }

    var wireValue: JSONValue {
        var object = WireObjectBuilder()
        object["title"] = .string(title)
        object["description"] = .string(description)
        object["place"] = place.map(JSONValue.string)
        return object.value
    }
}

/// 拼车拼团: shares of a ride or a purchase; participants join, nobody runs it.
public struct GroupDetails: Sendable, Hashable, WireDecodable {
    public var kind: GroupKind
    /// The route or the item.
    public var subject: String
    /// Joining and leaving stop then; not after the order's deadline.
    public var closesAt: Timestamp
    /// 2–50 shares; the publisher holds none.
    public var capacity: Int
    /// The quorum; nil: none (one participant is enough).
    public var minimumFill: Int?
    /// Fen per share.
    public var pricePerShare: Int

    public init(kind: GroupKind, subject: String, closesAt: Timestamp, capacity: Int, minimumFill: Int? = nil,
                pricePerShare: Int) {
        self.kind = kind
        self.subject = subject
        self.closesAt = closesAt
        self.capacity = capacity
        self.minimumFill = minimumFill
        self.pricePerShare = pricePerShare
    }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        var object = try WireObject(value, at: path)
        kind = try object.required("kind")
        subject = try object.required("subject")
        closesAt = try object.required("closes_at")
        capacity = try object.required("capacity")
        minimumFill = try object.optional("minimum_fill")
        pricePerShare = try object.required("price_per_share")
        object.finish()
    }

    var wireValue: JSONValue {
        var object = WireObjectBuilder()
        object["kind"] = kind.wireValue
        object["subject"] = .string(subject)
        object["closes_at"] = closesAt.wireValue
        object["capacity"] = .integer(Int64(capacity))
        object["minimum_fill"] = minimumFill.map { .integer(Int64($0)) }
        object["price_per_share"] = .integer(Int64(pricePerShare))
        return object.value
    }
}
