import Testing
@testable import BangbangCore

@Suite struct SearchTextTests {
    /// The searched parts joined by newlines and lowercased, as the text was first defined.
    private func joined(_ details: OrderDetails) -> String {
        let parts: [String]
        switch details {
        case .express(let express):
            parts = [express.pickupStation, express.dropOffPlace]
        case .purchase(let purchase):
            parts = purchase.items.map(\.name) + [purchase.store ?? "", purchase.dropOffPlace] + purchase.items.compactMap(\.note)
        case .bounty(let bounty):
            parts = [bounty.title, bounty.description, bounty.place ?? ""]
        case .group(let group):
            parts = [group.subject]
        }
        return parts.joined(separator: "\n").lowercased()
    }

    @Test func isThePartsJoinedByNewlinesAndLowercased() {
        let samples: [OrderDetails] = [
            .express(ExpressDetails(pickupStation: "Cainiao STATION 3", pickupCode: "8-2", parcelSize: .small,
                                    dropOffPlace: "Dorm 7 Ä", dropOffRoom: nil, contactPhone: nil)),
            .purchase(PurchaseDetails(items: [PurchaseItem(name: "Oat MILK", quantity: 2, note: "COLD"),
                                              PurchaseItem(name: "面包", quantity: 1)],
                                      store: nil, goodsBudget: 0, dropOffPlace: "", dropOffRoom: nil)),
            .purchase(PurchaseDetails(items: [PurchaseItem(name: "İstanbul simit", quantity: 1, note: "")],
                                      store: "Campus Mart", goodsBudget: 100, dropOffPlace: "Library", dropOffRoom: "2F")),
            .bounty(BountyDetails(title: "Lost umbrella", description: "Black \"Totes\",\nNEAR the gym", place: nil)),
            .bounty(BountyDetails(title: "", description: "", place: "")),
            .group(GroupDetails(kind: .carpool, subject: "Campus → AIRPORT", closesAt: Timestamp(milliseconds: 0),
                                capacity: 3, minimumFill: nil, pricePerShare: 0)),
        ]
        for details in samples {
            #expect(details.searchText == joined(details))
        }
        #expect(samples[1].searchText == "oat milk\n面包\n\n\ncold")
    }
}
