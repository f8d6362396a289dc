// Sessions against a real server: a device logged out from another one finds out by itself, a
// logout forgets the stored session, and both connections stay up for the next login.
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

extension LiveServerTests {
    @Suite(.timeLimit(.minutes(2))) struct SessionTests {
        @Test func aSessionRevokedElsewhereAndALogoutAreReportedAndForgotten() async throws {
            let server = try ServerProcess.start()
            let phone = Live.freshPhone()
            let lostStore = MemorySessionStore()
            let lost = Live.connection(port: server.port, store: lostStore)
            let lostUpdates = UpdateRecorder(lost)
            try await lost.connect()
            _ = try await Live.logIn(lost, phone: phone)
            try await lost.send(SetPassword(password: "correct horse"))

            let keptStore = MemorySessionStore()
            let kept = Live.connection(port: server.port, store: keptStore)
            let keptUpdates = UpdateRecorder(kept)
            try await kept.connect()
            let login = try await kept.send(LogInWithPassword(phone: phone, password: "correct horse", device: "tablet"))
            #expect(!login.isNew)
            #expect(await eventually {
                lostUpdates.updates.contains { if case .event(let event) = $0, case .login(_, .password) = event.kind { true } else { false } }
            }, "the other device hears of the login")

            // The lost phone is logged out from the tablet.
            let sessions = try await kept.send(ListSessions())
            #expect(sessions.count == 2 && sessions.filter(\.isCurrent).count == 1)
            let phoneSession = try #require(sessions.first { !$0.isCurrent })
            try await kept.send(RevokeSession(sessionID: phoneSession.id))
            #expect(await eventually { lostUpdates.essential.contains(.loggedOut(.revoked)) }, "\(lostUpdates.essential)")
            let isStillLoggedIn = await lost.isLoggedIn
            #expect(try lostStore.load() == nil && !isStillLoggedIn)
            #expect(await lost.state == .online, "still connected, for the next login")
            #expect(try await lost.send(GetServerInfo()).orderTypes.count == 4)
            await #expect(throws: BangbangError.self) { try await lost.send(GetProfile()) }

            // The tablet logs itself out.
            try await kept.send(LogOut())
            #expect(await eventually { keptUpdates.essential.contains(.loggedOut(.loggedOut)) }, "\(keptUpdates.essential)")
            #expect(!keptUpdates.essential.contains(.loggedOut(.revoked)), "its own logout is not a revocation")
            #expect(try keptStore.load() == nil)
            do {
                _ = try await kept.send(GetProfile())
                Issue.record("a logged-out connection was answered")
            } catch {
                #expect(error.code == .unauthenticated)
            }
            for connection in [lost, kept] { await connection.disconnect() }
        }
    }
}
