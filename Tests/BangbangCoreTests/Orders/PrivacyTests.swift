import Testing
@testable import BangbangCore

@Suite struct PrivacyTests {
    func privateFields(_ view: OrderView) -> [String?] {
        switch view.details {
        case .express(let d): [d.pickupCode, d.dropOffRoom, d.contactPhone]
        case .purchase(let d): [d.dropOffRoom]
        default: []
        }
    }

    @Test func privateFieldsReachOnlyPublisherAndAssignedRunner() throws {
        var driver = ShardDriver()
        let express = try driver.publish(Fixture.express())
        let purchase = try driver.publish(Fixture.purchase())
        for id in [express, purchase] {
            #expect(privateFields(try driver.shard.detail(id, viewer: Fixture.publisher)).allSatisfy { $0 != nil })
            #expect(privateFields(try driver.shard.detail(id, viewer: Fixture.runner)).allSatisfy { $0 == nil })
            #expect(privateFields(try driver.shard.detail(id, viewer: nil)).allSatisfy { $0 == nil })
            try driver.run(.accept(isVerifiedRunner: true), on: id, by: Fixture.runner)
            #expect(privateFields(try driver.shard.detail(id, viewer: Fixture.runner)).allSatisfy { $0 != nil })
            #expect(privateFields(try driver.shard.detail(id, viewer: Fixture.rival)).allSatisfy { $0 == nil })
            try driver.run(.abandon, on: id, by: Fixture.runner)
            #expect(privateFields(try driver.shard.detail(id, viewer: Fixture.runner)).allSatisfy { $0 == nil })
        }
    }

    @Test func participantListReachesOnlyPublisherAndParticipants() throws {
        var driver = ShardDriver()
        let id = try driver.publish(Fixture.group())
        try driver.run(.join, on: id, by: UserID(10))
        #expect(try driver.shard.detail(id, viewer: Fixture.publisher).participants == [UserID(10)])
        #expect(try driver.shard.detail(id, viewer: UserID(10)).participants == [UserID(10)])
        let outsider = try driver.shard.detail(id, viewer: Fixture.stranger)
        #expect(outsider.participants.isEmpty)
        #expect(outsider.participantCount == 1)
    }
}
