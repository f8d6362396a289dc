// The publish form, and its validation (product brief, "Find": incomplete orders are refused
// with a clear message naming the field).

/// What a publisher submits. The board assigns id, status and timeline.
public struct OrderDraft: Codable, Hashable, Sendable {
    public var campus: String
    public var deadline: Timestamp
    public var tip: Cents
    /// Ask for a delivery code (收货码); ignored for group orders, which have no delivery.
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

    /// Checks every field; the first failure names its field (`items[2].qty`).
    public func validate(now: Timestamp, rules: OrderRules) throws(DomainError) {
        try Self.requireText(campus, "campus", max: rules.maximumShortText)
        guard deadline > now else {
            throw .invalid("deadline", "the deadline must be in the future")
        }
        guard deadline.milliseconds - now.milliseconds <= rules.maximumDeadlineAhead else {
            let days = rules.maximumDeadlineAhead / 86_400_000
            throw .invalid("deadline", "the deadline may be at most \(days) days ahead")
        }
        try Self.requireMoney(tip, "tip", max: rules.maximumTip)
        switch details {
        case .express(let express):
            try validate(express, rules: rules)
        case .purchase(let purchase):
            try validate(purchase, rules: rules)
        case .bounty(let bounty):
            try Self.requireText(bounty.title, "title", max: rules.maximumShortText)
            try Self.requireText(bounty.description, "description", max: rules.maximumLongText)
            try Self.optionalText(bounty.place, "place", max: rules.maximumShortText)
        case .group(let group):
            try validate(group, now: now, rules: rules)
        }
    }

    private func validate(_ express: ExpressDetails, rules: OrderRules) throws(DomainError) {
        try Self.requireText(express.pickupStation, "pickup_station", max: rules.maximumShortText)
        try Self.optionalText(express.pickupCode, "pickup_code", max: rules.maximumShortText)
        try Self.requireText(express.dropOffPlace, "drop_off_place", max: rules.maximumShortText)
        try Self.optionalText(express.dropOffRoom, "drop_off_room", max: rules.maximumShortText)
        if let phone = express.contactPhone {
            guard Self.isPhoneNumber(phone) else {
                throw .invalid("contact_phone", "the contact phone must look like +8613812345678")
            }
        }
    }

    private func validate(_ purchase: PurchaseDetails, rules: OrderRules) throws(DomainError) {
        guard !purchase.items.isEmpty else { throw .invalid("items", "add at least one item") }
        guard purchase.items.count <= rules.maximumItems else {
            throw .invalid("items", "at most \(rules.maximumItems) items per order")
        }
        for (index, item) in purchase.items.enumerated() {
            try Self.requireText(item.name, "items[\(index)].name", max: rules.maximumShortText)
            guard (1...99).contains(item.quantity) else {
                throw .invalid("items[\(index)].qty", "the quantity must be between 1 and 99")
            }
            try Self.optionalText(item.note, "items[\(index)].note", max: rules.maximumShortText)
        }
        try Self.optionalText(purchase.store, "store", max: rules.maximumShortText)
        try Self.requireMoney(purchase.goodsBudget, "goods_budget", max: rules.maximumGoodsBudget)
        try Self.requireText(purchase.dropOffPlace, "drop_off_place", max: rules.maximumShortText)
        try Self.optionalText(purchase.dropOffRoom, "drop_off_room", max: rules.maximumShortText)
    }

    private func validate(_ group: GroupDetails, now: Timestamp, rules: OrderRules) throws(DomainError) {
        try Self.requireText(group.subject, "subject", max: rules.maximumShortText)
        guard group.closesAt > now else {
            throw .invalid("closes_at", "the closing time must be in the future")
        }
        guard group.closesAt <= deadline else {
            throw .invalid("closes_at", "the closing time must not be after the deadline")
        }
        guard (2...50).contains(group.capacity) else {
            throw .invalid("capacity", "the capacity must be between 2 and 50")
        }
        if let minimum = group.minimumFill {
            guard (1...group.capacity).contains(minimum) else {
                throw .invalid("minimum_fill", "the minimum fill must be between 1 and the capacity")
            }
        }
        try Self.requireMoney(group.pricePerShare, "price_per_share", max: rules.maximumTip)
    }

    static func requireText(_ text: String, _ field: String, max: Int) throws(DomainError) {
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw .invalid(field, "\(field) is required")
        }
        guard text.count <= max else {
            throw .invalid(field, "\(field) may be at most \(max) characters")
        }
    }

    static func optionalText(_ text: String?, _ field: String, max: Int) throws(DomainError) {
        guard let text else { return }
        guard text.count <= max else {
            throw .invalid(field, "\(field) may be at most \(max) characters")
        }
    }

    static func requireMoney(_ amount: Cents, _ field: String, max: Cents) throws(DomainError) {
        guard amount >= 0 else { throw .invalid(field, "\(field) must not be negative") }
        guard amount <= max else { throw .invalid(field, "\(field) may be at most \(yuan(max))") }
    }

    /// "¥12.05": how a user reads an amount.
    static func yuan(_ amount: Cents) -> String {
        let fraction = String(amount.magnitude % 100)
        return "\(amount < 0 ? "-" : "")¥\(amount.magnitude / 100)." + (fraction.count == 1 ? "0" : "") + fraction
    }

    /// E.164: "+" then 8…15 digits. Normalising bare mainland numbers is the client's job.
    static func isPhoneNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "+"), (9...16).contains(bytes.count) else { return false }
        return bytes.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
