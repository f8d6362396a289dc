// Live Discover feeds: which order changes a subscriber's list must hear about.
//
// Every watching connection keeps its filter, so a filter holds its types as a bit mask rather
// than a `Set` (a heap object per subscriber); `types` is built from the mask when asked.

/// What a runner's Discover list shows: open orders of some types, optionally narrowed by
/// campus, minimum tip and a keyword. Empty `types` means every type.
public struct FeedFilter: Codable, Hashable, Sendable {
    public let campus: String?
    public let minimumTip: Cents?
    /// Stored lowercased; matched as a substring of the order's public text.
    public let keyword: String?
    /// A bit per type in `types` (`bit(_:)`); every bit when `types` is empty, so that "every
    /// type" and the four types named one by one stay different filters, as they were as sets.
    private let typeMask: UInt8

    public init(types: Set<OrderType> = [], campus: String? = nil, minimumTip: Cents? = nil, keyword: String? = nil) {
        self.campus = campus
        self.minimumTip = minimumTip
        let trimmed = keyword?.lowercased()
        self.keyword = trimmed?.isEmpty == true ? nil : trimmed
        var mask: UInt8 = 0
        for type in types { mask |= Self.bit(type) }
        self.typeMask = types.isEmpty ? .max : mask
    }

    /// The types the filter was made with; empty for every type.
    public var types: Set<OrderType> {
        typeMask == .max ? [] : Set(OrderType.allCases.filter { typeMask & Self.bit($0) != 0 })
    }

    private static func bit(_ type: OrderType) -> UInt8 {
        switch type {
        case .express: 1
        case .purchase: 2
        case .bounty: 4
        case .group: 8
        }
    }

    /// The order matches the filter's criteria (whatever its status). Cheapest tests first.
    public func matches(_ order: Order) -> Bool {
        guard typeMask & Self.bit(order.type) != 0 else { return false }
        if let minimumTip, order.tip < minimumTip { return false }
        if let campus, order.campus != campus { return false }
        if let keyword, !order.searchText.contains(keyword) { return false }
        return true
    }

    /// Whether a subscriber's list shows the order: open and matching.
    public func shows(_ order: Order) -> Bool { order.isListed && matches(order) }

    /// The delta this subscriber's list needs for one applied event, or nil for none. Keeps
    /// the list exactly the open, matching orders. O(1) apart from a keyword substring test.
    public func change(before: Order?, after: Order) -> FeedChange? {
        let wasShown = before.map(shows) ?? false
        let isShown = shows(after)
        switch (wasShown, isShown) {
        case (false, true): return .enter
        case (true, false): return .leave
        case (true, true): return before?.revision == after.revision ? nil : .update
        case (false, false): return nil
        }
    }
}

extension FeedFilter {
    private enum CodingKeys: String, CodingKey { case types, campus, minimumTip, keyword }

    /// Decodes through `init`, so the keyword is lowercased and the type mask derived, whatever
    /// the input says.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(types: try container.decodeIfPresent(Set<OrderType>.self, forKey: .types) ?? [],
                  campus: try container.decodeIfPresent(String.self, forKey: .campus),
                  minimumTip: try container.decodeIfPresent(Cents.self, forKey: .minimumTip),
                  keyword: try container.decodeIfPresent(String.self, forKey: .keyword))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(types.sorted { $0.rawValue < $1.rawValue }, forKey: .types)
        try container.encodeIfPresent(campus, forKey: .campus)
        try container.encodeIfPresent(minimumTip, forKey: .minimumTip)
        try container.encodeIfPresent(keyword, forKey: .keyword)
    }
}

/// How a subscriber's list changes.
public enum FeedChange: String, Codable, Hashable, Sendable {
    /// An open order starts matching (published, abandoned, a group with a free share again).
    case enter
    /// Still listed but changed (a tip bump, a participant joined).
    case update
    /// No longer listed: taken, cancelled, expired, full, or out of the filter.
    case leave
}
