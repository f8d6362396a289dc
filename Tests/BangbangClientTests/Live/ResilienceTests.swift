// What the library does for the app when things go wrong, against a real server: a restart
// (resume with no gap and no duplicate, across an app relaunch too), events beyond the
// retention (resync), and a network that drops or goes silent under the connection.
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

extension LiveServerTests {
    @Suite(.timeLimit(.minutes(3))) struct ResilienceTests {
        @Test func resumeAcrossAServerRestartAndAnAppRelaunchHasNoGapAndNoDuplicate() async throws {
            let server = try ServerProcess.start()
            let storePath = server.directory.appendingPathComponent("publisher-session.json").path
            let (publisher, publisherUser) = try await Live.user(server, store: FileSessionStore(path: storePath))
            let (runner, _) = try await Live.runner(server)
            var publisherUpdates = UpdateRecorder(publisher)
            let runnerUpdates = UpdateRecorder(runner)

            let order = try await publisher.send(.publish(.bounty(BountyDetails(title: "Restart", description: "survives"),
                                                                  campus: "North", deadline: Live.inAnHour, tip: 100)))
            _ = try await runner.send(.accept(order.id))
            #expect(await publisherUpdates.waitFor(.accepted, of: order.id))
            let seenBeforeRelaunch = publisherUpdates.eventSeqs

            // The app is closed; meanwhile the runner works and the server restarts.
            publisherUpdates.stop()
            await publisher.disconnect()
            _ = try await runner.send(.start(order.id))
            try server.restart()
            // The runner's connection comes back by itself (the server closed it with 1001).
            #expect(await eventually { runnerUpdates.updates.filter { $0 == .stateChanged(.online) }.count == 2 })
            let delivered = try await runner.send(.deliver(order.id))
            #expect(delivered.status == .delivered)

            // The app is launched again: a new connection on the same store resumes the session.
            let stored = try #require(try FileSessionStore(path: storePath).load())
            #expect(stored.userID == publisherUser.id.rawValue && stored.lastSeq == seenBeforeRelaunch.last)
            let relaunched = Live.connection(port: server.port, store: FileSessionStore(path: storePath))
            publisherUpdates = UpdateRecorder(relaunched)
            #expect(try await relaunched.connect()?.id == publisherUser.id)
            #expect(await publisherUpdates.waitFor(.delivered, of: order.id))
            #expect(publisherUpdates.changes(of: order.id) == [.inProgress, .delivered], "only what was missed")
            #expect(publisherUpdates.eventSeqs.first == (seenBeforeRelaunch.last ?? 0) + 1, "no gap at the relaunch")
            _ = try await relaunched.send(.confirm(order.id))
            #expect(await publisherUpdates.waitFor(.confirmed, of: order.id))
            #expect(publisherUpdates.isGapless && !publisherUpdates.essential.contains(.resyncNeeded))
            #expect(await runnerUpdates.waitFor(.confirmed, of: order.id))
            #expect(runnerUpdates.isGapless, "the runner's stream across the restart: \(runnerUpdates.eventSeqs)")
            #expect(runnerUpdates.changes(of: order.id) == [.accepted, .inProgress, .delivered, .confirmed])
            #expect(runnerUpdates.updates.contains(.stateChanged(.online)) && server.log.contains("event=shutting_down"))
            for connection in [relaunched, runner] { await connection.disconnect() }
        }

        @Test func eventsBeyondTheRetentionAskTheAppToRefetch() async throws {
            let server = try ServerProcess.start()
            let phone = Live.freshPhone()
            let store = MemorySessionStore()
            let away = Live.connection(port: server.port, store: store)
            let updates = UpdateRecorder(away)
            try await away.connect()
            _ = try await Live.logIn(away, phone: phone)
            try await away.send(SetPassword(password: "correct horse"))
            #expect(await eventually { updates.eventSeqs.count == 1 && (try? store.load())?.lastSeq == updates.eventSeqs.first })
            let before = try #require(try store.load()).lastSeq
            await away.disconnect()

            // Another device of the same user (one SMS a minute: it logs in with the password) makes
            // more events than the server keeps (1,000).
            let other = Live.connection(port: server.port)
            try await other.connect()
            _ = try await other.send(LogInWithPassword(phone: phone, password: "correct horse"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for batch in 0..<21 {
                    group.addTask {
                        for index in 0..<50 { _ = try await other.send(UpdateProfile(bio: "update \(batch)-\(index)")) }
                    }
                }
                try await group.waitForAll()
            }

            try await away.connect()
            #expect(await eventually { updates.essential.contains(.resyncNeeded) }, "\(updates.essential.prefix(5))")
            #expect(updates.eventSeqs == [before], "nothing is replayed past the retention")
            let position = try #require(try store.load()).lastSeq
            #expect(position > before + 1_000, "the position jumped to the server's: \(before) → \(position)")
            // The stream goes on live from there.
            _ = try await other.send(UpdateProfile(bio: "one more"))
            #expect(await eventually { updates.eventSeqs == [before, position + 1] }, "\(updates.eventSeqs)")
            for connection in [away, other] { await connection.disconnect() }
        }

        @Test func aConnectionCutUnderTheClientComesBackByItselfAndCatchesUp() async throws {
            let server = try ServerProcess.start()
            let relay = try TCPRelay(to: server.port)
            defer { relay.stop() }
            let (publisher, _) = try await Live.user(server, port: relay.port)
            let (runner, _) = try await Live.runner(server)
            let updates = UpdateRecorder(publisher)
            let order = try await publisher.send(.publish(.bounty(BountyDetails(title: "Cut", description: "the network"),
                                                                  campus: "North", deadline: Live.inAnHour, tip: 100)))
            let board = try await publisher.watchBoard(BoardFilter(types: [.bounty]))
            #expect(await eventually { await board.orders.map(\.id) == [order.id] })

            await relay.cut()
            // While the publisher is away, the runner takes the order: the board and the stream
            // must catch up without the app doing anything.
            _ = try await runner.send(.accept(order.id))
            #expect(await updates.waitFor(.accepted, of: order.id), "the event reaches the app after the reconnect")
            #expect(await eventually { await board.orders.isEmpty }, "the renewed board no longer lists it")
            #expect(relay.accepted >= 2, "a new connection was made: \(relay.accepted)")
            #expect(updates.isGapless)
            #expect(updates.updates.contains { if case .stateChanged(.waiting) = $0 { true } else { false } })
            _ = try await publisher.send(GetOrder(order.id))
            await board.stop()
            for connection in [publisher, runner] { await connection.disconnect() }
        }

        @Test func aNetworkThatGoesSilentIsNoticedByPingsAndReplaced() async throws {
            let server = try ServerProcess.start()
            let relay = try TCPRelay(to: server.port)
            defer { relay.stop() }
            let (publisher, _) = try await Live.user(server, port: relay.port, pingInterval: .milliseconds(300))
            let (runner, _) = try await Live.runner(server)
            let updates = UpdateRecorder(publisher)
            let order = try await publisher.send(.publish(.bounty(BountyDetails(title: "Silence", description: "no RST"),
                                                                  campus: "North", deadline: Live.inAnHour, tip: 100)))
            await relay.freeze()
            _ = try await runner.send(.accept(order.id))
            // Nothing closes the frozen connection: only the unanswered pings tell the library.
            #expect(await eventually { updates.updates.contains { if case .stateChanged(.waiting) = $0 { true } else { false } } })
            await relay.thaw()
            #expect(await updates.waitFor(.accepted, of: order.id))
            #expect(updates.isGapless)
            for connection in [publisher, runner] { await connection.disconnect() }
        }
    }
}
