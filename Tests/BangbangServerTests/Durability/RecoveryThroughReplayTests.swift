// Every kind of journal record comes back through the server's own replay: the state after a
// restart equals the state before it, for the accounts store and for every board shard.
import BangbangCore
import Foundation
import Journal
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct RecoveryThroughReplayTests {
    @Test func everyAccountEventTypeSurvivesARestart() async throws {
        let harness = try ApplicationHarness()
        let admin = try await harness.logIn(ApplicationHarness.adminPhone)                       // registered
        let user = try await harness.logIn("+8613900000001")                                     // registered
        harness.clock.advance(milliseconds: 61_000)                                              // past the resend spacing
        try await harness.logIn("+8613900000001")                                                // loggedIn
        try await harness.changeAccounts { store, now in                                         // passwordSet
            try store.decideSetPassword(user: user, passwordHash: "scrypt$test$hash", now: now)
        }
        try await harness.changeAccounts { store, now in                                         // profileUpdated
            try store.decideProfileUpdate(user: user, update: ProfileUpdate(nickname: "Xiao Li", bio: "fast legs"), now: now)
        }
        try await harness.changeAccounts { store, now in                                         // verificationSubmitted
            try store.decideVerificationSubmission(user: user, realName: "Li Lei", studentID: "2026001", school: "North", now: now)
        }
        try await harness.changeAccounts { store, now in                                         // verificationDecided
            try store.decideVerificationApproval(administrator: admin, user: user, now: now)
        }
        try await harness.changeAccounts { store, now in                                         // administratorChanged
            try store.decideAdministratorGrant(by: admin, to: user, now: now)
        }
        try await harness.changeAccounts { store, now in                                         // feedbackSubmitted
            try store.decideFeedback(user: user, text: "The board is great", contact: nil, now: now)
        }
        try await harness.changeAccounts { store, now in                                         // phoneChanged
            var random = SystemRandomNumberGenerator()
            let issue = try store.decideCodeRequest(phone: "+8613900000002", purpose: .changePhone, requester: user,
                                                    clientIP: "127.0.0.1", now: now, using: &random)
            store.apply(.codeIssued(issue))
            let decision = store.decidePhoneChange(user: user, newPhone: "+8613900000002", code: issue.code, now: now)
            for event in decision.throttle { store.apply(event) }
            return try decision.outcome.get()
        }
        let before = await harness.accountState()
        let session = try #require(before.accounts[user]?.sessions.first)
        try await harness.changeAccounts { store, now in                                         // sessionRevoked
            try store.decideRevokeSession(user: user, session: session, now: now)
        }
        harness.clock.advance(milliseconds: 400 * 24 * 3_600_000)
        let purge = try await harness.changeAccounts { store, now in                             // sessionsPurged
            guard let event = store.decideSessionPurge(now: now) else { throw JournalEntryError(message: "nothing to purge") }
            return event
        }
        guard case .sessionsPurged = purge else { Issue.record("expected a purge, got \(purge)"); return }

        let expected = await harness.accountState()
        #expect(expected.accounts[user]?.phone.rawValue == "+8613900000002")
        #expect(expected.feedback.count == 1)
        try harness.restart()
        #expect(await harness.accountState() == expected)
        #expect(harness.app.isApprovedRunner(user))
        #expect(!harness.app.isApprovedRunner(admin))
    }

    @Test func everyOrderChangeSurvivesARestart() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000011")
        let runner = try await harness.logIn("+8613900000012")
        let member = try await harness.logIn("+8613900000013")
        let now = harness.clock.now

        // Express with a delivery code: accept, pick up, deliver with the code (completes), rate both ways.
        let coded = try await harness.publish(Drafts.express(now: now, code: true), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: coded, by: runner)
        try await harness.run(.pickUp, on: coded, by: runner)
        let code = try #require(await harness.order(coded)?.deliveryCode)
        try await harness.run(.deliver(code: code), on: coded, by: runner)
        try await harness.run(.rate(stars: 5, comment: "quick"), on: coded, by: publisher)
        try await harness.run(.rate(stars: 4, comment: "polite"), on: coded, by: runner)
        // Purchase: accept, pick up, deliver, confirm.
        let bought = try await harness.publish(Drafts.purchase(now: now), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: bought, by: runner)
        try await harness.run(.pickUp, on: bought, by: runner)
        try await harness.run(.deliver(code: nil), on: bought, by: runner)
        try await harness.run(.confirm, on: bought, by: publisher)
        // Bounty: raise the tip, accept, abandon (back on the board), cancel.
        let bounty = try await harness.publish(Drafts.bounty(now: now), by: publisher)
        try await harness.run(.raiseTip(to: 900), on: bounty, by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: bounty, by: runner)
        try await harness.run(.abandon, on: bounty, by: runner)
        try await harness.run(.cancel(reason: "found it"), on: bounty, by: publisher)
        // Bounty: accept, start, deliver (awaiting confirmation).
        let started = try await harness.publish(Drafts.bounty(now: now), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: started, by: runner)
        try await harness.run(.start, on: started, by: runner)
        try await harness.run(.deliver(code: nil), on: started, by: runner)
        // Group of two: join, leave, join again, fill it, complete.
        let group = try await harness.publish(Drafts.group(now: now, capacity: 2), by: publisher)
        try await harness.run(.join, on: group, by: member)
        try await harness.run(.leave, on: group, by: member)
        try await harness.run(.join, on: group, by: member)
        try await harness.run(.join, on: group, by: runner)
        try await harness.run(.complete, on: group, by: publisher)
        // Expiry through the timer path, and an order left open.
        let expiring = try await harness.publish(Drafts.bounty(now: now, deadlineIn: 60_000), by: publisher)
        let open = try await harness.publish(Drafts.express(now: now), by: publisher)
        harness.clock.advance(milliseconds: 120_000)
        let expiringShard = harness.app.shards[expiring.shard]
        await withCheckedContinuation { continuation in
            expiringShard.perform { owner in
                owner.applyDueTransitions()
                continuation.resume()
            }
        }
        #expect(await eventually { await harness.order(expiring)?.status == .expired })
        // The shard shows the expiry once applied; the board numbers it only once it is durable.
        let tracking = harness.app.tracking
        #expect(await eventually { tracking.withLock { $0.inFlight } == 0 })

        let expected = await harness.shardStates()
        let sequences = OrderType.allCases.map { harness.app.boardSequence(of: $0) }
        let streams = harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence)
        try harness.restart()
        #expect(await harness.shardStates() == expected)
        #expect(OrderType.allCases.map { harness.app.boardSequence(of: $0) } == sequences)
        #expect(harness.app.publisher.accounts.streams.snapshot().mapValues(\.lastSequence) == streams)
        #expect(await harness.order(open)?.status == .open)
        #expect(await harness.order(coded)?.status == .completed)
    }

    @Test func deadlinesThatPassedWhileTheServerWasDownAreAppliedAtStart() async throws {
        let harness = try ApplicationHarness()
        let publisher = try await harness.logIn("+8613900000021")
        let order = try await harness.publish(Drafts.bounty(now: harness.clock.now, deadlineIn: 60_000), by: publisher)
        try harness.restart()
        harness.clock.advance(milliseconds: 3_600_000)
        #expect(await harness.order(order)?.status == .open)   // recovery alone changes nothing
        harness.app.attach(to: [])
        #expect(await eventually { await harness.order(order)?.status == .expired })
        // The expiry was journaled, not just applied: it is there after another restart.
        try await Task.sleep(for: .milliseconds(50))
        try harness.restart()
        #expect(await harness.order(order)?.status == .expired)
    }
}
