// A feed filter keeps its types as a bit mask; what it shows and how it compares must be what
// it was with a set.
import Foundation
import Testing
@testable import BangbangCore

@Suite struct FeedFilterTests {
    /// Every subset of the four types.
    static let typeSets: [Set<OrderType>] = (0..<16).map { bits in
        Set(OrderType.allCases.enumerated().filter { bits & (1 << $0.offset) != 0 }.map(\.element))
    }

    @Test func typesComeBackAsGiven() throws {
        for types in Self.typeSets {
            let filter = FeedFilter(types: types, campus: "north")
            #expect(filter.types == types)
            let decoded = try JSONDecoder().decode(FeedFilter.self, from: JSONEncoder().encode(filter))
            #expect(decoded == filter && decoded.types == types)
        }
    }

    @Test func filtersAreEqualExactlyWhenTheirTypeSetsAre() {
        for first in Self.typeSets {
            for second in Self.typeSets {
                #expect((FeedFilter(types: first) == FeedFilter(types: second)) == (first == second))
            }
        }
        // "Every type" and the four types named one by one stay two filters, as two sets were.
        #expect(FeedFilter(types: []) != FeedFilter(types: Set(OrderType.allCases)))
        #expect(Set([FeedFilter(types: []), FeedFilter(types: Set(OrderType.allCases)), FeedFilter(types: [])]).count == 2)
    }
}
