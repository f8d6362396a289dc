// Orders read straight from the keyed binary form, without Codable: the reading half of
// JournalEntry+OrderWriting.swift. Every `orders.mine` page and `order.get` that reaches the
// archive decodes its orders, and the tree-then-Codable decoder spent most of that time in
// dictionaries, boxed nodes and coding paths rather than in bytes.
//
// It reads what the synthesized `init(from:)` methods read, under the same rules, so a record
// either writer made decodes to the same order: members in any order; unknown members skipped
// (a field a later version adds); an optional member absent or null is nil, a required one
// missing or of the wrong type is an error; an integer in either encoding, if it fits; a key
// twice in one container, an unknown enum value or trailing bytes are corruption. A second
// schema of `Order`, kept in step with Codable by `StoredOrderReaderTests`.
import BangbangCore

/// A type that reads its keyed binary form directly, to the value its `init(from:)` reads
/// through `KeyedBinaryDecoder`; the decoder hands it every such value nested in what it decodes.
/// The reading half of `KeyedBinaryWritable`, and like it a second schema of the type, kept in
/// step with Codable by `StoredOrderReaderTests` (orders).
protocol KeyedBinaryReadable: Decodable {
    /// The value whose keyed container starts at the reader's position. The reader holds that
    /// container alone, so its depth counts from 0: the decoder has bounded the whole record's.
    static func read(from reader: inout KeyedBinaryReader) throws -> Self
}

extension Order: KeyedBinaryReadable {
    static func read(from reader: inout KeyedBinaryReader) throws -> Order { try reader.readOrder(depth: 0) }
}

extension KeyedBinaryReader {
    /// The order at the reader's position.
    mutating func readOrder(depth: Int) throws -> Order {
        var id: OrderID?, publisher: UserID?, campus: String?, createdAt: Timestamp?, deadline: Timestamp?
        var tip: Cents?, status: OrderStatus?, runner: UserID?, acceptedAt: Timestamp?, autoConfirmAt: Timestamp?
        var deliveryCode: String?, details: OrderDetails?, participants: [UserID]?, timeline: [TimelineEntry]?
        var cancellation: Cancellation?, ratingByPublisher: Rating?, ratingByRunner: Rating?
        var revision: Int?, searchText: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "id": id = OrderID(rawValue: try reader.readInteger(UInt64.self))
            case "publisher": publisher = try reader.readUser()
            case "campus": campus = try reader.readString()
            case "createdAt": createdAt = try reader.readTimestamp()
            case "deadline": deadline = try reader.readTimestamp()
            case "tip": tip = try reader.readInteger(Cents.self)
            case "status": status = try reader.readRawValue(OrderStatus.self)
            case "runner": runner = try reader.readOptional { try $0.readUser() }
            case "acceptedAt": acceptedAt = try reader.readOptional { try $0.readTimestamp() }
            case "autoConfirmAt": autoConfirmAt = try reader.readOptional { try $0.readTimestamp() }
            case "deliveryCode": deliveryCode = try reader.readOptional { try $0.readString() }
            case "details": details = try reader.readDetails(depth: depth + 1)
            case "participants": participants = try reader.readUsers(depth: depth + 1)
            case "timeline": timeline = try reader.readTimeline(depth: depth + 1)
            case "cancellation": cancellation = try reader.readOptional { try $0.readCancellation(depth: depth + 1) }
            case "ratingByPublisher": ratingByPublisher = try reader.readOptional { try $0.readRating(depth: depth + 1) }
            case "ratingByRunner": ratingByRunner = try reader.readOptional { try $0.readRating(depth: depth + 1) }
            case "revision": revision = try reader.readInteger(Int.self)
            case "searchText": searchText = try reader.readString()
            default: return false
            }
            return true
        }
        return Order(id: try requireValue(id, "id"), publisher: try requireValue(publisher, "publisher"),
                     campus: try requireValue(campus, "campus"), createdAt: try requireValue(createdAt, "createdAt"),
                     deadline: try requireValue(deadline, "deadline"), tip: try requireValue(tip, "tip"),
                     status: try requireValue(status, "status"), runner: runner, acceptedAt: acceptedAt,
                     autoConfirmAt: autoConfirmAt, deliveryCode: deliveryCode, details: try requireValue(details, "details"),
                     participants: try requireValue(participants, "participants"), timeline: try requireValue(timeline, "timeline"),
                     cancellation: cancellation, ratingByPublisher: ratingByPublisher, ratingByRunner: ratingByRunner,
                     revision: try requireValue(revision, "revision"), searchText: try requireValue(searchText, "searchText"))
    }

    private mutating func readTimeline(depth: Int) throws -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        try readUnkeyed(depth: depth) { reader in
            var status: OrderStatus?, at: Timestamp?, actor: UserID?, note: String?
            try reader.readKeyed(depth: depth + 1) { reader, key in
                switch key {
                case "status": status = try reader.readRawValue(OrderStatus.self)
                case "at": at = try reader.readTimestamp()
                case "actor": actor = try reader.readOptional { try $0.readUser() }
                case "note": note = try reader.readOptional { try $0.readString() }
                default: return false
                }
                return true
            }
            entries.append(TimelineEntry(status: try reader.requireValue(status, "status"), at: try reader.requireValue(at, "at"),
                                         actor: actor, note: note))
        }
        return entries
    }

    private mutating func readCancellation(depth: Int) throws -> Cancellation {
        var cause: Cancellation.Cause?, reason: String?, fee: Cents?, runner: UserID?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "cause": cause = try reader.readRawValue(Cancellation.Cause.self)
            case "reason": reason = try reader.readOptional { try $0.readString() }
            case "fee": fee = try reader.readInteger(Cents.self)
            case "runner": runner = try reader.readOptional { try $0.readUser() }
            default: return false
            }
            return true
        }
        return Cancellation(cause: try requireValue(cause, "cause"), reason: reason, fee: try requireValue(fee, "fee"), runner: runner)
    }

    private mutating func readRating(depth: Int) throws -> Rating {
        var stars: Int?, comment: String?, at: Timestamp?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "stars": stars = try reader.readInteger(Int.self)
            case "comment": comment = try reader.readString()
            case "at": at = try reader.readTimestamp()
            default: return false
            }
            return true
        }
        return Rating(stars: try requireValue(stars, "stars"), comment: try requireValue(comment, "comment"), at: try requireValue(at, "at"))
    }

    /// `{case: {"_0": details}}`, as synthesized enum coding nests it: exactly one known case.
    private mutating func readDetails(depth: Int) throws -> OrderDetails {
        var details: OrderDetails?
        var cases = 0
        try readKeyed(depth: depth) { reader, key in
            let read: ((inout KeyedBinaryReader) throws -> OrderDetails)?
            switch key {
            case "express": read = { .express(try $0.readExpress(depth: depth + 2)) }
            case "purchase": read = { .purchase(try $0.readPurchase(depth: depth + 2)) }
            case "bounty": read = { .bounty(try $0.readBounty(depth: depth + 2)) }
            case "group": read = { .group(try $0.readGroup(depth: depth + 2)) }
            default: read = nil
            }
            guard let read else { return false }
            cases += 1
            var payload: OrderDetails?
            try reader.readKeyed(depth: depth + 1) { reader, key in
                guard "_0" ~= key else { return false }
                payload = try read(&reader)
                return true
            }
            details = try reader.requireValue(payload, "_0")
            return true
        }
        guard cases == 1, let details else { throw corrupt("order details hold \(cases) known cases, not one") }
        return details
    }

    private mutating func readExpress(depth: Int) throws -> ExpressDetails {
        var station: String?, code: String?, size: ParcelSize?, place: String?, room: String?, phone: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "pickupStation": station = try reader.readString()
            case "pickupCode": code = try reader.readOptional { try $0.readString() }
            case "parcelSize": size = try reader.readRawValue(ParcelSize.self)
            case "dropOffPlace": place = try reader.readString()
            case "dropOffRoom": room = try reader.readOptional { try $0.readString() }
            case "contactPhone": phone = try reader.readOptional { try $0.readString() }
            default: return false
            }
            return true
        }
        return ExpressDetails(pickupStation: try requireValue(station, "pickupStation"), pickupCode: code,
                              parcelSize: try requireValue(size, "parcelSize"), dropOffPlace: try requireValue(place, "dropOffPlace"),
                              dropOffRoom: room, contactPhone: phone)
    }

    private mutating func readPurchase(depth: Int) throws -> PurchaseDetails {
        var items: [PurchaseItem]?, store: String?, budget: Cents?, place: String?, room: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "items":
                var read: [PurchaseItem] = []
                try reader.readUnkeyed(depth: depth + 1) { reader in read.append(try reader.readPurchaseItem(depth: depth + 2)) }
                items = read
            case "store": store = try reader.readOptional { try $0.readString() }
            case "goodsBudget": budget = try reader.readInteger(Cents.self)
            case "dropOffPlace": place = try reader.readString()
            case "dropOffRoom": room = try reader.readOptional { try $0.readString() }
            default: return false
            }
            return true
        }
        return PurchaseDetails(items: try requireValue(items, "items"), store: store, goodsBudget: try requireValue(budget, "goodsBudget"),
                               dropOffPlace: try requireValue(place, "dropOffPlace"), dropOffRoom: room)
    }

    private mutating func readPurchaseItem(depth: Int) throws -> PurchaseItem {
        var name: String?, quantity: Int?, note: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "name": name = try reader.readString()
            case "qty": quantity = try reader.readInteger(Int.self)
            case "note": note = try reader.readOptional { try $0.readString() }
            default: return false
            }
            return true
        }
        return PurchaseItem(name: try requireValue(name, "name"), quantity: try requireValue(quantity, "qty"), note: note)
    }

    private mutating func readBounty(depth: Int) throws -> BountyDetails {
        var title: String?, description: String?, place: String?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "title": title = try reader.readString()
            case "description": description = try reader.readString()
            case "place": place = try reader.readOptional { try $0.readString() }
            default: return false
            }
            return true
        }
        return BountyDetails(title: try requireValue(title, "title"), description: try requireValue(description, "description"), place: place)
    }

    private mutating func readGroup(depth: Int) throws -> GroupDetails {
        var kind: GroupKind?, subject: String?, closesAt: Timestamp?, capacity: Int?, minimumFill: Int?, price: Cents?
        try readKeyed(depth: depth) { reader, key in
            switch key {
            case "kind": kind = try reader.readRawValue(GroupKind.self)
            case "subject": subject = try reader.readString()
            case "closesAt": closesAt = try reader.readTimestamp()
            case "capacity": capacity = try reader.readInteger(Int.self)
            case "minimumFill": minimumFill = try reader.readOptional { try $0.readInteger(Int.self) }
            case "pricePerShare": price = try reader.readInteger(Cents.self)
            default: return false
            }
            return true
        }
        return GroupDetails(kind: try requireValue(kind, "kind"), subject: try requireValue(subject, "subject"),
                            closesAt: try requireValue(closesAt, "closesAt"), capacity: try requireValue(capacity, "capacity"),
                            minimumFill: minimumFill, pricePerShare: try requireValue(price, "pricePerShare"))
    }

    private mutating func readUsers(depth: Int) throws -> [UserID] {
        var users: [UserID] = []
        try readUnkeyed(depth: depth) { reader in users.append(try reader.readUser()) }
        return users
    }

    mutating func readUser() throws -> UserID { UserID(rawValue: try readInteger(UInt64.self)) }
    mutating func readTimestamp() throws -> Timestamp { Timestamp(rawValue: try readInteger(Int64.self)) }
}

// The value readers the order reader is made of.

extension KeyedBinaryReader {
    /// Reads a keyed container: `member` reads the value of each key it knows and returns false
    /// for one it does not, whose value is then skipped. Keys are matched as bytes, not strings.
    mutating func readKeyed(depth: Int, _ member: (inout KeyedBinaryReader, KeyedBinaryKey) throws -> Bool) throws {
        try expect(KeyedBinaryTag.keyed, "a keyed container")
        guard depth < KeyedBinaryDecoder.maximumDepth else { throw corrupt("nested too deeply") }
        var keys: [ArraySlice<UInt8>] = []
        while true {
            let lengthPlusOne = try readLEB128()
            if lengthPlusOne == 0 { return }
            let start = offset
            let key = try readUTF8Bytes(count: lengthPlusOne - 1)
            guard !keys.contains(key) else {
                throw corrupt("key \"\(String(decoding: key, as: UTF8.self))\" appears twice")
            }
            keys.append(key)
            if try !member(&self, KeyedBinaryKey(utf8: key)) {
                // An unknown key must still be text, as the tree decoder requires.
                var text = self
                text.rewind(to: start)
                _ = try text.readUTF8(count: lengthPlusOne - 1)
                _ = try readValue(depth: depth + 1)
            }
        }
    }

    /// Reads an unkeyed container, `element` reading each value.
    mutating func readUnkeyed(depth: Int, _ element: (inout KeyedBinaryReader) throws -> Void) throws {
        try expect(KeyedBinaryTag.unkeyed, "an unkeyed container")
        guard depth < KeyedBinaryDecoder.maximumDepth else { throw corrupt("nested too deeply") }
        while true {
            guard !isAtEnd else { throw corrupt("record ends early") }
            if try peekByte() == KeyedBinaryTag.endOfUnkeyed {
                _ = try readByte()
                return
            }
            try element(&self)
        }
    }

    /// nil for a null, else what `read` reads.
    mutating func readOptional<Value>(_ read: (inout KeyedBinaryReader) throws -> Value) throws -> Value? {
        if try peekByte() == KeyedBinaryTag.null {
            _ = try readByte()
            return nil
        }
        return try read(&self)
    }

    mutating func readInteger<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
        let converted: Integer?
        switch try readByte() {
        case KeyedBinaryTag.signed:
            let zigzag = try readLEB128()
            converted = Integer(exactly: Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case KeyedBinaryTag.unsigned:
            converted = Integer(exactly: try readLEB128())
        default:
            throw mismatch("an integer")
        }
        guard let converted else { throw corrupt("integer does not fit \(type)") }
        return converted
    }

    mutating func readString() throws -> String {
        try expect(KeyedBinaryTag.string, "a string")
        return try readUTF8(count: try readLEB128())
    }

    mutating func readRawValue<Value: RawRepresentable>(_ type: Value.Type) throws -> Value where Value.RawValue == String {
        let raw = try readString()
        guard let value = Value(rawValue: raw) else { throw corrupt("\"\(raw)\" is no \(type)") }
        return value
    }

    /// Whether the next byte ends the unkeyed container being read.
    func isAtEndOfUnkeyed() throws -> Bool { try peekByte() == KeyedBinaryTag.endOfUnkeyed }

    func requireValue<Value>(_ value: Value?, _ key: String) throws -> Value {
        guard let value else { throw corrupt("no value for \"\(key)\"") }
        return value
    }

    private func peekByte() throws -> UInt8 {
        guard !isAtEnd else { throw corrupt("record ends early") }
        return bytes[offset]
    }

    private mutating func expect(_ tag: UInt8, _ expected: String) throws {
        guard try readByte() == tag else { throw mismatch(expected) }
    }

    /// The error for a value of the wrong type, reported at its type byte (just read).
    private func mismatch(_ expected: String) -> DecodingError {
        var atTypeByte = self
        atTypeByte.stepBack()
        return atTypeByte.corrupt("expected \(expected)")
    }
}

/// A member's key as its UTF-8 bytes, matched against the names a reader knows with `case "name":`.
struct KeyedBinaryKey {
    let utf8: ArraySlice<UInt8>

    static func ~= (name: StaticString, key: KeyedBinaryKey) -> Bool {
        name.utf8CodeUnitCount == key.utf8.count && name.withUTF8Buffer { key.utf8.elementsEqual($0) }
    }
}
