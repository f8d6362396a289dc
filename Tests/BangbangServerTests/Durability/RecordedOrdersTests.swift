// What the journal recorded stays as it was recorded: orders stored before a rule tightened
// (a group order with a tip, a delivery code, a raised tip, all refused since 2026-12-01) still
// recover, from the journal and from a snapshot, and a fee or an auto-confirm time decided under
// one configuration survives a restart under another.
import BangbangCore
import Foundation
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct RecordedOrdersTests {
    @Test func aGroupOrderWithATipFromAnOlderServerStillRecovers() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000031")
        let member = try await harness.logIn("+8613900000032")
        let index = harness.app.layout.shards(of: .group).lowerBound
        let rules = harness.app.orderRules
        // The events an older server journaled: a group published with a tip and a delivery code,
        // then a tip raise. Today's decide refuses all three, so they are written as recorded.
        let published = try await harness.changeShard(index) { shard, now in
            var random = SystemRandomNumberGenerator()
            let event = try shard.decidePublish(Drafts.group(now: now), by: publisher, now: now, rules: rules, using: &random)
            guard case .published(var order) = event.change else { throw JournalEntryError(message: "not a publish") }
            order.tip = 500
            order.deliveryCode = "0421"
            return OrderEvent(orderID: order.id, at: now, actor: publisher, change: .published(order), notify: event.notify)
        }
        let id = published.after.id
        try await harness.changeShard(index) { _, now in
            OrderEvent(orderID: id, at: now, actor: publisher, change: .tipRaised(to: 800), notify: [publisher])
        }
        let refused = await #expect(throws: DomainError.self) {
            try await harness.run(.raiseTip(to: 900), on: id, by: publisher)
        }
        #expect(refused?.code == .invalidTransition)

        try harness.restart()
        var order = try #require(await harness.order(id))
        #expect(order.tip == 800 && order.deliveryCode == "0421" && order.status == .open)
        try await harness.run(.join, on: id, by: member)

        harness.snapshot()
        try harness.restart(gracefully: true)
        order = try #require(await harness.order(id))
        #expect(order.tip == 800 && order.participants == [member])
    }

    @Test func feesAndAutoConfirmTimesStayAsDecidedUnderAnotherConfiguration() async throws {
        let harness = try ApplicationHarness()
        harness.configuration.cancelGraceSeconds = 0
        harness.configuration.cancelFee = 150
        harness.configuration.autoConfirmHours = 1
        try harness.restart()
        let publisher = try await harness.logIn("+8613900000041")
        let runner = try await harness.logIn("+8613900000042")
        let now = harness.clock.now

        let cancelled = try await harness.publish(Drafts.express(now: now), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: cancelled, by: runner)
        harness.clock.advance(milliseconds: 1)
        try await harness.run(.cancel(reason: "plans changed"), on: cancelled, by: publisher)
        let delivered = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: delivered, by: runner)
        let deliveredAt = harness.clock.now
        try await harness.run(.deliver(code: nil), on: delivered, by: runner)
        #expect(await harness.order(cancelled)?.cancellation?.fee == 150)
        #expect(await harness.order(delivered)?.autoConfirmAt == deliveredAt.adding(milliseconds: 3_600_000))

        harness.configuration = ServerConfiguration()
        harness.configuration.dataDirectory = harness.directory + "/data"
        harness.configuration.fsyncPolicy = .never
        harness.configuration.shardsPerType = 1
        for graceful in [false, true] {
            try harness.restart(gracefully: graceful)
            #expect(harness.app.orderRules.cancellationFee == 200)
            #expect(await harness.order(cancelled)?.cancellation?.fee == 150)
            #expect(await harness.order(delivered)?.autoConfirmAt == deliveredAt.adding(milliseconds: 3_600_000))
        }
    }
}
