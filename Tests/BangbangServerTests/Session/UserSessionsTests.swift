// A loop's registry keeps a user's sessions, one inline or several in a list: each is sent the
// user's personal events, and closing one leaves the others registered.
import BangbangCore
import BangbangProtocol
import Testing
import TestSupport
import WebSocketServer
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct UserSessionsTests {
    @Test func eachSessionOfAUserIsSentItsEventsWhicheverCloses() async throws {
        let application = try ApplicationHarness()
        let first = try SessionHarness(sharing: application)
        let second = try SessionHarness(sharing: application, on: first.registry)
        let third = try SessionHarness(sharing: application, on: first.registry)
        for harness in [first, second, third] {
            #expect(try await harness.logIn("+8613900004242").isSuccess)
            application.clock.advance(milliseconds: 61_000)   // past the code's resend interval
        }
        let registry = first.registry
        let user = try #require(first.session.user)
        #expect(second.session.user == user && third.session.user == user)
        let loop = first.loop

        var sequence: UInt64 = 1 << 40
        /// Posts a personal event for `user` and waits for the drain; returns who got it.
        func deliver() async -> [Bool] {
            sequence += 1
            let before = [first, second, third].map(\.channel.pushes.count)
            registry.post(.personal(user, sequence: sequence, SharedMessage(text: Array("event \(sequence)".utf8))))
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in registry.post { done.resume() } }
            return zip([first, second, third], before).map { $0.channel.pushes.count > $1 }
        }

        let all = loop.queue.sync { registry.sessions(of: user) }
        #expect(Set(all.map(ObjectIdentifier.init)) == Set([first, second, third].map { ObjectIdentifier($0.session) }))
        #expect(await deliver() == [true, true, true])

        loop.queue.sync { second.session.webSocketDidClose(second.channel) }
        #expect(loop.queue.sync { registry.sessions(of: user).count } == 2)
        #expect(await deliver() == [true, false, true])

        loop.queue.sync { first.session.webSocketDidClose(first.channel) }
        #expect(loop.queue.sync { registry.sessions(of: user).map(ObjectIdentifier.init) } == [ObjectIdentifier(third.session)])
        #expect(await deliver() == [false, false, true], "the last one, kept alone, is still sent them")
        #expect(loop.queue.sync { registry.connectedUsers } == [user])

        loop.queue.sync { third.session.webSocketDidClose(third.channel) }
        #expect(loop.queue.sync { registry.sessions(of: user).isEmpty })
        #expect(loop.queue.sync { registry.connectedUsers.isEmpty })
    }
}
