// The order on the wire (protocol/orders.md): domain values ↔ JSON, snake_case throughout.
// Views are encoded as the viewer may see them; `OrderView` has already removed what the viewer
// may not see, and absent optional fields are omitted rather than sent as null.
import BangbangCore

public enum OrderWire {
    public static func encode(_ view: OrderView) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .integer(Int64(view.id.rawValue)),
            "type": .string(view.type.rawValue),
            "status": .string(view.status.rawValue),
            "publisher": .integer(Int64(view.publisher.rawValue)),
            "campus": .string(view.campus),
            "created_at": .integer(view.createdAt.rawValue),
            "deadline": .integer(view.deadline.rawValue),
            "tip": .integer(view.tip),
            "details": encode(view.details),
            "timeline": .array(view.timeline.map(encode)),
            "revision": .integer(Int64(view.revision)),
        ]
        if let runner = view.runner { object["runner"] = .integer(Int64(runner.rawValue)) }
        if let code = view.deliveryCode { object["delivery_code"] = .string(code) }
        if view.type == .group {
            object["participant_count"] = .integer(Int64(view.participantCount))
            if !view.participants.isEmpty {
                object["participants"] = .array(view.participants.map { .integer(Int64($0.rawValue)) })
            }
        }
        if let at = view.autoConfirmAt { object["auto_confirm_at"] = .integer(at.rawValue) }
        if let cancellation = view.cancellation {
            var value: [String: JSONValue] = ["cause": .string(cancellation.cause.rawValue), "fee": .integer(cancellation.fee)]
            if let reason = cancellation.reason { value["reason"] = .string(reason) }
            object["cancellation"] = .object(value)
        }
        if let rating = view.ratingByPublisher { object["rating_by_publisher"] = encode(rating) }
        if let rating = view.ratingByRunner { object["rating_by_runner"] = encode(rating) }
        return .object(object)
    }

    static func encode(_ entry: TimelineEntry) -> JSONValue {
        var object: [String: JSONValue] = ["status": .string(entry.status.rawValue), "at": .integer(entry.at.rawValue)]
        if let actor = entry.actor { object["actor"] = .integer(Int64(actor.rawValue)) }
        if let note = entry.note { object["note"] = .string(note) }
        return .object(object)
    }

    static func encode(_ rating: Rating) -> JSONValue {
        ["stars": .integer(Int64(rating.stars)), "comment": .string(rating.comment), "at": .integer(rating.at.rawValue)]
    }

    public static func encode(_ details: OrderDetails) -> JSONValue {
        var object: [String: JSONValue] = [:]
        func put(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
        switch details {
        case .express(let express):
            put("pickup_station", express.pickupStation)
            put("pickup_code", express.pickupCode)
            put("parcel_size", express.parcelSize.rawValue)
            put("drop_off_place", express.dropOffPlace)
            put("drop_off_room", express.dropOffRoom)
            put("contact_phone", express.contactPhone)
        case .purchase(let purchase):
            object["items"] = .array(purchase.items.map { item in
                var value: [String: JSONValue] = ["name": .string(item.name), "qty": .integer(Int64(item.quantity))]
                if let note = item.note { value["note"] = .string(note) }
                return .object(value)
            })
            put("store", purchase.store)
            object["goods_budget"] = .integer(purchase.goodsBudget)
            put("drop_off_place", purchase.dropOffPlace)
            put("drop_off_room", purchase.dropOffRoom)
        case .bounty(let bounty):
            put("title", bounty.title)
            put("description", bounty.description)
            put("place", bounty.place)
        case .group(let group):
            put("kind", group.kind.rawValue)
            put("subject", group.subject)
            object["closes_at"] = .integer(group.closesAt.rawValue)
            object["capacity"] = .integer(Int64(group.capacity))
            if let minimum = group.minimumFill { object["minimum_fill"] = .integer(Int64(minimum)) }
            object["price_per_share"] = .integer(group.pricePerShare)
        }
        return .object(object)
    }

    /// What `decodeDraft` needs to check values as well as shapes: the time and the rules the
    /// publish is judged by.
    public struct DraftChecks: Sendable {
        public var now: Timestamp
        public var rules: OrderRules

        public init(now: Timestamp, rules: OrderRules) {
            self.now = now
            self.rules = rules
        }
    }

    /// Reads an `order.publish` request into a draft, field by field in the order of the
    /// publish table: an unknown member first, then `type`, `campus`, `deadline`, `tip`,
    /// `delivery_code`, `details` (protocol/README.md, "Error precedence"). Without `checks`
    /// only shapes are checked (types, required members, enum values); with them each
    /// top-level field's value is checked by the domain as soon as it is read, and the details'
    /// values once they are read, so the field an error names is the first bad one in the table
    /// whichever kinds of mistakes a request makes. Errors name wire paths (`details.items[1].qty`).
    ///
    /// `tip` may be left out of a group order only (it is 0: nobody runs the errand for a tip).
    public static func decodeDraft(_ arguments: Arguments, checks: DraftChecks? = nil) throws(DomainError) -> OrderDraft {
        try arguments.allowOnly(topLevelDraftFields)
        let type = try arguments.choice("type", as: OrderType.self)
        let campus = try arguments.string("campus")
        if let checks { try OrderDraft.checkCampus(campus, rules: checks.rules) }
        let deadline = Timestamp(rawValue: try arguments.integer("deadline"))
        if let checks { try OrderDraft.checkDeadline(deadline, now: checks.now, rules: checks.rules) }
        let tip = type == .group ? try arguments.optionalInteger("tip") ?? 0 : try arguments.integer("tip")
        if let checks { try OrderDraft.checkTip(tip, type: type, rules: checks.rules) }
        let wantsDeliveryCode = try arguments.optionalBool("delivery_code") ?? false
        if checks != nil { try OrderDraft.checkDeliveryCode(wantsDeliveryCode, type: type) }
        var details = try decodeDetails(of: type, try arguments.object("details"))
        if let checks {
            do {
                details = try details.validated(deadline: deadline, now: checks.now, rules: checks.rules)
            } catch {
                throw publishError(error)
            }
        }
        return OrderDraft(campus: campus, deadline: deadline, tip: tip, wantsDeliveryCode: wantsDeliveryCode,
                          details: details)
    }

    /// The shapes of a type's `details`, member by member in the order of its table.
    private static func decodeDetails(of type: OrderType, _ details: Arguments) throws(DomainError) -> OrderDetails {
        switch type {
        case .express:
            try details.allowOnly(["pickup_station", "pickup_code", "parcel_size", "drop_off_place", "drop_off_room", "contact_phone"])
            return .express(ExpressDetails(
                pickupStation: try details.string("pickup_station"),
                pickupCode: try details.optionalString("pickup_code"),
                parcelSize: try details.optionalChoice("parcel_size", as: ParcelSize.self) ?? .small,
                dropOffPlace: try details.string("drop_off_place"),
                dropOffRoom: try details.optionalString("drop_off_room"),
                contactPhone: try details.optionalString("contact_phone", maxLength: 32)))
        case .purchase:
            try details.allowOnly(["items", "store", "goods_budget", "drop_off_place", "drop_off_room"])
            var items: [PurchaseItem] = []
            for item in try details.objects("items", maxCount: 100) {
                try item.allowOnly(["name", "qty", "note"])
                items.append(PurchaseItem(name: try item.string("name"),
                                          quantity: Int(try item.integer("qty", in: Int64(Int32.min)...Int64(Int32.max))),
                                          note: try item.optionalString("note")))
            }
            return .purchase(PurchaseDetails(
                items: items, store: try details.optionalString("store"),
                goodsBudget: try details.optionalInteger("goods_budget") ?? 0,
                dropOffPlace: try details.string("drop_off_place"),
                dropOffRoom: try details.optionalString("drop_off_room")))
        case .bounty:
            try details.allowOnly(["title", "description", "place"])
            return .bounty(BountyDetails(title: try details.string("title"),
                                         description: try details.string("description", maxLength: 5000),
                                         place: try details.optionalString("place")))
        case .group:
            try details.allowOnly(["kind", "subject", "closes_at", "capacity", "minimum_fill", "price_per_share"])
            return .group(GroupDetails(
                kind: try details.choice("kind", as: GroupKind.self),
                subject: try details.string("subject"),
                closesAt: Timestamp(rawValue: try details.integer("closes_at")),
                capacity: Int(try details.integer("capacity", in: Int64(Int32.min)...Int64(Int32.max))),
                minimumFill: try details.optionalInteger("minimum_fill", in: Int64(Int32.min)...Int64(Int32.max)).map { Int($0) },
                pricePerShare: try details.integer("price_per_share")))
        }
    }

    /// The members of an `order.publish` request outside `details`.
    static let topLevelDraftFields: Set<String> = ["type", "campus", "deadline", "tip", "delivery_code", "details"]

    /// The domain names a draft's fields as the form shows them ("pickup_station",
    /// "items[2].qty"); on the wire the per-type ones sit under `details`. Returns `error` with
    /// its field rewritten to the wire path, so every publish error names the field the client sent.
    public static func publishError(_ error: DomainError) -> DomainError {
        guard let field = error.field, !field.hasPrefix("details.") else { return error }
        let head = field.prefix { $0 != "." && $0 != "[" }
        guard !topLevelDraftFields.contains(String(head)) else { return error }
        var mapped = error
        mapped.field = "details." + field
        return mapped
    }
}
