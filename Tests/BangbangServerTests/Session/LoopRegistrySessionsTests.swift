// A loop's table of logged-in sessions by user keeps one session without an array
// (`UserSessions`); registering and unregistering through one, several and none must keep the
// sessions in order and the user's presence on the loop exactly while one is left.
import BangbangCore
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct LoopRegistrySessionsTests {
    @Test func sessionsOfAUserComeAndGoInOrder() throws {
        let first = try SessionHarness()
        let others = try (0..<2).map { _ in try SessionHarness(sharing: first.application, on: first.registry) }
        let sessions = [first.session] + others.map(\.session)
        let registry = first.registry
        let presence = first.application.app.publisher.accounts.presence
        let user = UserID(7)
        let bit = UInt64(1) << UInt64(registry.loop.index)
        func registered() -> [ObjectIdentifier] { registry.loop.queue.sync { registry.sessions(of: user).map(ObjectIdentifier.init) } }

        #expect(registered().isEmpty && presence.loops(of: user) & bit == 0)
        for (count, session) in sessions.enumerated() {
            registry.loop.queue.sync { registry.register(session, as: user) }
            #expect(registered() == sessions[...count].map(ObjectIdentifier.init))
            #expect(presence.loops(of: user) & bit != 0)
        }
        registry.loop.queue.sync { registry.unregister(sessions[1], as: user) }
        #expect(registered() == [sessions[0], sessions[2]].map(ObjectIdentifier.init))
        registry.loop.queue.sync { registry.unregister(sessions[0], as: user) }
        #expect(registered() == [ObjectIdentifier(sessions[2])])
        #expect(presence.loops(of: user) & bit != 0)
        registry.loop.queue.sync { registry.unregister(sessions[2], as: user) }
        #expect(registered().isEmpty && presence.loops(of: user) & bit == 0)
    }

    @Test func oneSessionIsOneReference() {
        #expect(MemoryLayout<UserSessions>.size == MemoryLayout<ClientSession>.size)
    }
}
