import Testing
@testable import BangbangCore

/// Every status × every action of a single-runner order, as a table.
@Suite struct LifecycleTests {
    enum Outcome: Equatable, CustomStringConvertible {
        case moves(to: OrderStatus)
        case fails(ErrorCode)
        var description: String {
            switch self {
            case .moves(let status): "→ \(status.rawValue)"
            case .fails(let code): "✗ \(code)"
            }
        }
    }

    enum Action: String, CaseIterable {
        case accept, pickUp, start, deliver, confirm, abandon, cancel

        /// The command and who sends it: runner actions by the runner of the fixtures (who
        /// holds the order once accepted), accept by a rival runner.
        var request: (OrderCommand, UserID) {
            switch self {
            case .accept: (.accept(isVerifiedRunner: true), Fixture.rival)
            case .pickUp: (.pickUp, Fixture.runner)
            case .start: (.start, Fixture.runner)
            case .deliver: (.deliver(code: nil), Fixture.runner)
            case .confirm: (.confirm, Fixture.publisher)
            case .abandon: (.abandon, Fixture.runner)
            case .cancel: (.cancel(reason: "plans changed"), Fixture.publisher)
            }
        }
    }

    /// A shard holding one order of `type` brought to `status` by the fixture users.
    static func order(_ type: OrderType, in status: OrderStatus) throws -> (ShardDriver, OrderID) {
        var driver = ShardDriver()
        let id = try driver.publish(type == .bounty ? Fixture.bounty() : Fixture.express())
        let steps: [(OrderCommand, UserID)]
        let progress: (OrderCommand, UserID) = (type == .bounty ? .start : .pickUp, Fixture.runner)
        let accept: (OrderCommand, UserID) = (.accept(isVerifiedRunner: true), Fixture.runner)
        let deliver: (OrderCommand, UserID) = (.deliver(code: nil), Fixture.runner)
        switch status {
        case .open: steps = []
        case .accepted: steps = [accept]
        case .pickedUp, .inProgress: steps = [accept, progress]
        case .delivered: steps = [accept, progress, deliver]
        case .completed: steps = [accept, progress, deliver, (.confirm, Fixture.publisher)]
        case .cancelled: steps = [(.cancel(reason: nil), Fixture.publisher)]
        case .expired:
            driver.tick(Fixture.now.adding(milliseconds: Fixture.hour))
            steps = []
        case .full: fatalError("single-runner orders are never full")
        }
        for (command, user) in steps { try driver.run(command, on: id, by: user) }
        #expect(driver.status(id) == status)
        return (driver, id)
    }

    static let invalid = Outcome.fails(.invalidTransition)
    static let notYours = Outcome.fails(.notYourOrder)
    static let taken = Outcome.fails(.orderTaken)
    static let closed = Outcome.fails(.orderClosed)

    static let expressTable: [OrderStatus: [Action: Outcome]] = [
        .open: [.accept: .moves(to: .accepted), .pickUp: notYours, .start: notYours, .deliver: notYours,
                .confirm: invalid, .abandon: notYours, .cancel: .moves(to: .cancelled)],
        .accepted: [.accept: taken, .pickUp: .moves(to: .pickedUp), .start: invalid, .deliver: invalid,
                    .confirm: invalid, .abandon: .moves(to: .open), .cancel: .moves(to: .cancelled)],
        .pickedUp: [.accept: taken, .pickUp: invalid, .start: invalid, .deliver: .moves(to: .delivered),
                    .confirm: invalid, .abandon: invalid, .cancel: .moves(to: .cancelled)],
        .delivered: [.accept: taken, .pickUp: invalid, .start: invalid, .deliver: invalid,
                     .confirm: .moves(to: .completed), .abandon: invalid, .cancel: invalid],
        .completed: [.accept: closed, .pickUp: invalid, .start: invalid, .deliver: invalid,
                     .confirm: invalid, .abandon: invalid, .cancel: invalid],
        .cancelled: [.accept: closed, .pickUp: notYours, .start: notYours, .deliver: notYours,
                     .confirm: invalid, .abandon: notYours, .cancel: invalid],
        .expired: [.accept: closed, .pickUp: notYours, .start: notYours, .deliver: notYours,
                   .confirm: invalid, .abandon: notYours, .cancel: invalid],
    ]

    static let bountyTable: [OrderStatus: [Action: Outcome]] = [
        .accepted: [.accept: taken, .pickUp: invalid, .start: .moves(to: .inProgress),
                    .deliver: .moves(to: .delivered), .confirm: invalid, .abandon: .moves(to: .open),
                    .cancel: .moves(to: .cancelled)],
        .inProgress: [.accept: taken, .pickUp: invalid, .start: invalid, .deliver: .moves(to: .delivered),
                      .confirm: invalid, .abandon: invalid, .cancel: .moves(to: .cancelled)],
        .delivered: [.accept: taken, .pickUp: invalid, .start: invalid, .deliver: invalid,
                     .confirm: .moves(to: .completed), .abandon: invalid, .cancel: invalid],
    ]

    func check(_ type: OrderType, _ table: [OrderStatus: [Action: Outcome]]) throws {
        for (status, row) in table {
            #expect(row.count == Action.allCases.count, "row \(status) is incomplete")
            for action in Action.allCases {
                var (driver, id) = try Self.order(type, in: status)
                let (command, user) = action.request
                let outcome: Outcome
                do {
                    let applied = try driver.run(command, on: id, by: user)
                    outcome = .moves(to: applied.after.status)
                } catch {
                    outcome = .fails(error.code)
                }
                #expect(outcome == row[action], "\(type) \(status.rawValue) + \(action.rawValue)")
            }
        }
    }

    @Test func expressTransitionsFollowTheTable() throws {
        #expect(Set(Self.expressTable.keys) == Set(OrderStatus.allCases).subtracting([.full, .inProgress]))
        try check(.express, Self.expressTable)
    }

    @Test func bountyTransitionsFollowTheTable() throws {
        try check(.bounty, Self.bountyTable)
    }

    @Test func illegalTransitionNamesFromAndTo() throws {
        var (driver, id) = try Self.order(.express, in: .accepted)
        let error = domainError { () throws(DomainError) in try driver.run(.confirm, on: id, by: Fixture.publisher) }
        #expect(error?.code == .invalidTransition)
        #expect(error?.message.contains("accepted") == true)
        #expect(error?.message.contains("completed") == true)
    }

    @Test func everyTransitionIsTimestampedInTheTimeline() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.express())
        let t = Fixture.now
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner, at: t.adding(milliseconds: 10))
        try driver.run(.pickUp, on: id, by: Fixture.runner, at: t.adding(milliseconds: 20))
        try driver.run(.deliver(code: nil), on: id, by: Fixture.runner, at: t.adding(milliseconds: 30))
        try driver.run(.confirm, on: id, by: Fixture.publisher, at: t.adding(milliseconds: 40))
        let timeline = try #require(driver.shard.order(id)).timeline
        #expect(timeline.map(\.status) == [.open, .accepted, .pickedUp, .delivered, .completed])
        #expect(timeline.map(\.at.milliseconds) == [0, 10, 20, 30, 40].map { t.milliseconds + $0 })
        #expect(timeline.map(\.actor) == [Fixture.publisher, Fixture.runner, Fixture.runner, Fixture.runner,
                                          Fixture.publisher])
    }

    @Test func abandonedOrderReturnsToBoardAndCanBeTakenByAnother() throws {
        var (driver, id) = try Self.order(.express, in: .accepted)
        let applied = try driver.run(.abandon, on: id, by: Fixture.runner)
        #expect(applied.after.runner == nil)
        #expect(applied.event.notify.contains(Fixture.runner))
        #expect(driver.shard.listOpen(OrderListQuery()).items.map(\.id) == [id])
        try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.rival)
        #expect(driver.shard.order(id)?.runner == Fixture.rival)
        #expect(driver.shard.orders(of: Fixture.runner, role: .accepted, scope: .all).isEmpty)
    }

    @Test func unknownOrderIsNotFound() {
        let driver = ShardDriver()
        let error = domainError { () throws(DomainError) in
            try driver.shard.decide(.confirm, on: OrderID(shard: 0, serial: 9), by: Fixture.publisher,
                                    now: Fixture.now, rules: Fixture.rules)
        }
        #expect(error?.code == .notFound)
    }
}
