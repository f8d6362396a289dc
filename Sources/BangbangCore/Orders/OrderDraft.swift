// The publish form, and its validation (product brief, "Find": incomplete orders are refused
// with a clear message naming the field).
//
// The checks run in the order of the `order.publish` table (protocol/operations-orders.md):
// campus, deadline, tip, delivery_code, then the details member by member, so the first field
// named is always the same one whatever else is wrong. The server calls the top-level checks
// as it reads each field of a request and `OrderDetails.validated` once the details are read
// (protocol/README.md, "Error precedence"); `validated(now:rules:)` runs them all again when
// the shard decides.

/// What a publisher submits. The board assigns id, status and timeline.
public struct OrderDraft: Codable, Hashable, Sendable {
    public var campus: String
    public var deadline: Timestamp
    public var tip: Cents
    /// Ask for a delivery code (收货码). Group orders have no delivery: asking is refused.
    public var wantsDeliveryCode: Bool
    public var details: OrderDetails

    public init(campus: String, deadline: Timestamp, tip: Cents, wantsDeliveryCode: Bool = false,
                details: OrderDetails) {
        self.campus = campus
        self.deadline = deadline
        self.tip = tip
        self.wantsDeliveryCode = wantsDeliveryCode
        self.details = details
    }

    public var type: OrderType { details.type }

    /// Checks every field and returns the draft as it is stored (a contact phone in E.164).
    /// The first failure names its field (`items[2].qty`).
    public func validated(now: Timestamp, rules: OrderRules) throws(DomainError) -> OrderDraft {
        try Self.checkCampus(campus, rules: rules)
        try Self.checkDeadline(deadline, now: now, rules: rules)
        try Self.checkTip(tip, type: type, rules: rules)
        try Self.checkDeliveryCode(wantsDeliveryCode, type: type)
        var draft = self
        draft.details = try details.validated(deadline: deadline, now: now, rules: rules)
        return draft
    }

    /// Checks every field (see `validated(now:rules:)`).
    public func validate(now: Timestamp, rules: OrderRules) throws(DomainError) {
        _ = try validated(now: now, rules: rules)
    }

    // MARK: The top-level fields

    /// Not blank, at most `maximumShortText`, and one of the configured campuses when there are any:
    /// a typo would put the order on a board of its own that nobody watches.
    public static func checkCampus(_ campus: String, rules: OrderRules) throws(DomainError) {
        try requireText(campus, "campus", max: rules.maximumShortText)
        guard rules.campuses.isEmpty || rules.campuses.contains(campus) else {
            throw .invalid("campus", "the campus must be one this service covers: "
                           + rules.campuses.joined(separator: ", "))
        }
    }

    public static func checkDeadline(_ deadline: Timestamp, now: Timestamp, rules: OrderRules) throws(DomainError) {
        guard deadline > now else {
            throw .invalid("deadline", "the deadline must be in the future", minimum: now.milliseconds + 1)
        }
        guard deadline.milliseconds - now.milliseconds <= rules.maximumDeadlineAhead else {
            let days = rules.maximumDeadlineAhead / 86_400_000
            throw .invalid("deadline", "the deadline may be at most \(days) days ahead",
                           maximum: now.milliseconds + rules.maximumDeadlineAhead)
        }
    }

    /// A group order has no runner to tip: its tip is 0 (absent on the wire).
    public static func checkTip(_ tip: Cents, type: OrderType, rules: OrderRules) throws(DomainError) {
        try requireMoney(tip, "tip", max: rules.maximumTip)
        guard type != .group || tip == 0 else {
            throw .invalid("tip", "a group order has no runner to tip; leave the tip out")
        }
    }

    /// Nothing is delivered in a group order, so it cannot have a delivery code.
    public static func checkDeliveryCode(_ wantsDeliveryCode: Bool, type: OrderType) throws(DomainError) {
        guard type != .group || !wantsDeliveryCode else {
            throw .invalid("delivery_code", "a group order has no delivery, so no delivery code")
        }
    }

    // MARK: Shared rules

    static func requireText(_ text: String, _ field: String, max: Int) throws(DomainError) {
        guard text.hasNonWhitespace else {
            throw .invalid(field, "\(field) is required", minimum: 1)
        }
        guard text.hasAtMost(characters: max) else {
            throw .invalid(field, "\(field) may be at most \(max) characters", maximum: Int64(max))
        }
    }

    static func optionalText(_ text: String?, _ field: String, max: Int) throws(DomainError) {
        guard let text else { return }
        guard text.hasAtMost(characters: max) else {
            throw .invalid(field, "\(field) may be at most \(max) characters", maximum: Int64(max))
        }
    }

    static func requireMoney(_ amount: Cents, _ field: String, max: Cents) throws(DomainError) {
        guard amount >= 0 else { throw .invalid(field, "\(field) must not be negative", minimum: 0) }
        guard amount <= max else { throw .invalid(field, "\(field) may be at most \(yuan(max))", maximum: max) }
    }

    /// "¥12.05": how a user reads an amount.
    static func yuan(_ amount: Cents) -> String {
        let fraction = String(amount.magnitude % 100)
        return "\(amount < 0 ? "-" : "")¥\(amount.magnitude / 100)." + (fraction.count == 1 ? "0" : "") + fraction
    }
}

extension OrderDetails {
    /// Checks every member in the order of its type's table and returns the details as stored.
    /// `deadline` is the order's (a group closes no later).
    public func validated(deadline: Timestamp, now: Timestamp, rules: OrderRules) throws(DomainError) -> OrderDetails {
        switch self {
        case .express(let express):
            return .express(try express.validated(rules: rules))
        case .purchase(let purchase):
            try purchase.validate(rules: rules)
            return self
        case .bounty(let bounty):
            try OrderDraft.requireText(bounty.title, "title", max: rules.maximumShortText)
            try OrderDraft.requireText(bounty.description, "description", max: rules.maximumLongText)
            try OrderDraft.optionalText(bounty.place, "place", max: rules.maximumShortText)
            return self
        case .group(let group):
            try group.validate(deadline: deadline, now: now, rules: rules)
            return self
        }
    }
}

extension ExpressDetails {
    /// The contact phone follows the one definition of a phone number (`PhoneNumber`): E.164,
    /// or a bare mainland mobile number, stored as E.164.
    func validated(rules: OrderRules) throws(DomainError) -> ExpressDetails {
        try OrderDraft.requireText(pickupStation, "pickup_station", max: rules.maximumShortText)
        try OrderDraft.optionalText(pickupCode, "pickup_code", max: rules.maximumShortText)
        try OrderDraft.requireText(dropOffPlace, "drop_off_place", max: rules.maximumShortText)
        try OrderDraft.optionalText(dropOffRoom, "drop_off_room", max: rules.maximumShortText)
        var result = self
        if let contactPhone {
            do {
                result.contactPhone = try PhoneNumber(parsing: contactPhone, field: "contact_phone").rawValue
            } catch {
                throw .invalid("contact_phone", "the contact phone must look like +8613812345678 or 13812345678")
            }
        }
        return result
    }
}

extension PurchaseDetails {
    func validate(rules: OrderRules) throws(DomainError) {
        guard !items.isEmpty else { throw .invalid("items", "add at least one item", minimum: 1) }
        guard items.count <= rules.maximumItems else {
            throw .invalid("items", "at most \(rules.maximumItems) items per order", maximum: Int64(rules.maximumItems))
        }
        for (index, item) in items.enumerated() {
            try OrderDraft.requireText(item.name, "items[\(index)].name", max: rules.maximumShortText)
            guard (1...99).contains(item.quantity) else {
                throw .invalid("items[\(index)].qty", "the quantity must be between 1 and 99", minimum: 1, maximum: 99)
            }
            try OrderDraft.optionalText(item.note, "items[\(index)].note", max: rules.maximumShortText)
        }
        try OrderDraft.optionalText(store, "store", max: rules.maximumShortText)
        try OrderDraft.requireMoney(goodsBudget, "goods_budget", max: rules.maximumGoodsBudget)
        try OrderDraft.requireText(dropOffPlace, "drop_off_place", max: rules.maximumShortText)
        try OrderDraft.optionalText(dropOffRoom, "drop_off_room", max: rules.maximumShortText)
    }
}

extension GroupDetails {
    func validate(deadline: Timestamp, now: Timestamp, rules: OrderRules) throws(DomainError) {
        try OrderDraft.requireText(subject, "subject", max: rules.maximumShortText)
        guard closesAt > now else {
            throw .invalid("closes_at", "the closing time must be in the future", minimum: now.milliseconds + 1)
        }
        guard closesAt <= deadline else {
            throw .invalid("closes_at", "the closing time must not be after the deadline", maximum: deadline.milliseconds)
        }
        guard (2...50).contains(capacity) else {
            throw .invalid("capacity", "the capacity must be between 2 and 50", minimum: 2, maximum: 50)
        }
        if let minimumFill {
            guard (1...capacity).contains(minimumFill) else {
                throw .invalid("minimum_fill", "the minimum fill must be between 1 and the capacity",
                               minimum: 1, maximum: Int64(capacity))
            }
        }
        try OrderDraft.requireMoney(pricePerShare, "price_per_share", max: rules.maximumTip)
    }
}
