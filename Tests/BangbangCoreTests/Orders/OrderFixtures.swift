// Shared fixtures of the orders tests: users, drafts of every type, a seeded random source and
// a shard driver that runs decide → apply and records every event for replay checks.
import Testing
import TestSupport
@testable import BangbangCore

enum Fixture {
    static let publisher = UserID(1)
    static let runner = UserID(2)
    static let rival = UserID(3)
    static let stranger = UserID(4)
    static let now = Timestamp(milliseconds: 1_767_225_600_000)
    static let hour: Int64 = 3_600_000
    static let rules = OrderRules()

    static func express(deadline: Timestamp = now.adding(milliseconds: hour), tip: Cents = 300,
                        campus: String = "north", code: Bool = false) -> OrderDraft {
        OrderDraft(campus: campus, deadline: deadline, tip: tip, wantsDeliveryCode: code,
                   details: .express(ExpressDetails(pickupStation: "Cainiao station 3", pickupCode: "8-2-1043",
                                                    parcelSize: .medium, dropOffPlace: "Dorm 7",
                                                    dropOffRoom: "512", contactPhone: "+8613812345678")))
    }

    static func purchase(items: [PurchaseItem] = [PurchaseItem(name: "Oat milk", quantity: 2)],
                         budget: Cents = 2_000) -> OrderDraft {
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: hour), tip: 200,
                   details: .purchase(PurchaseDetails(items: items, store: nil, goodsBudget: budget,
                                                      dropOffPlace: "Library", dropOffRoom: "B2-14")))
    }

    static func bounty(title: String = "Lost umbrella", description: String = "Black, near the gym",
                       tip: Cents = 500) -> OrderDraft {
        OrderDraft(campus: "south", deadline: now.adding(milliseconds: hour), tip: tip,
                   details: .bounty(BountyDetails(title: title, description: description, place: "Gym")))
    }

    static func group(capacity: Int = 3, minimumFill: Int? = nil,
                      closesAt: Timestamp = now.adding(milliseconds: hour),
                      deadline: Timestamp = now.adding(milliseconds: 2 * hour)) -> OrderDraft {
        OrderDraft(campus: "north", deadline: deadline, tip: 0,
                   details: .group(GroupDetails(kind: .carpool, subject: "Campus to airport",
                                                closesAt: closesAt, capacity: capacity,
                                                minimumFill: minimumFill, pricePerShare: 3_000)))
    }
}

/// Drives one shard the way the server does, keeping the journal of applied events.
struct ShardDriver {
    var shard: BoardShard
    var journal: [OrderEvent] = []
    var random = SeededGenerator(seed: 42)
    var rules = Fixture.rules

    init(index: Int = 0, serials: IDSpace = .all) { shard = BoardShard(index: index, serials: serials) }

    @discardableResult
    mutating func publish(_ draft: OrderDraft, by user: UserID = Fixture.publisher,
                          at now: Timestamp = Fixture.now) throws(DomainError) -> OrderID {
        try publishing(draft, by: user, at: now).after.id
    }

    mutating func publishing(_ draft: OrderDraft, by user: UserID = Fixture.publisher,
                             at now: Timestamp = Fixture.now) throws(DomainError) -> AppliedOrderChange {
        let event = try shard.decidePublish(draft, by: user, now: now, rules: rules, using: &random)
        return record(event)
    }

    @discardableResult
    mutating func run(_ command: OrderCommand, on id: OrderID, by user: UserID,
                      at now: Timestamp = Fixture.now) throws(DomainError) -> AppliedOrderChange {
        let event = try shard.decide(command, on: id, by: user, now: now, rules: rules)
        return record(event)
    }

    /// Applies whatever the clock decides at `now`.
    @discardableResult
    mutating func tick(_ now: Timestamp) -> [OrderEvent] {
        let events = shard.dueTransitions(now: now)
        for event in events { record(event) }
        return events
    }

    @discardableResult
    mutating func record(_ event: OrderEvent) -> AppliedOrderChange {
        journal.append(event)
        return shard.apply(event)
    }

    func status(_ id: OrderID) -> OrderStatus? { shard.order(id)?.status }
}

/// The error a throwing call produced, or nil if it succeeded.
func domainError<T>(_ body: () throws(DomainError) -> T) -> DomainError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}
