// The example in Sources/BangbangClient/README.md is ReadmeExample.swift, compiled with the
// tests and run here against a real server, with a runner taking the order it publishes.
import Foundation
import Testing
@testable import BangbangClient

extension LiveServerTests {
    @Suite(.timeLimit(.minutes(2))) struct ReadmeExampleTests {
        @Test func theReadmeExampleLogsInPublishesAndFollowsTheOrderUntilTaken() async throws {
            let server = try ServerProcess.start()
            let (runner, _) = try await Live.runner(server)
            let board = try await runner.watchBoard(BoardFilter(types: [.bounty], campus: "North"))
            // The runner takes every order as soon as its board shows it.
            let taker = Task {
                var taken: [OrderID] = []
                for await state in board.changes {
                    for order in state.orders where !taken.contains(order.id) {
                        taken.append(order.id)
                        _ = try? await runner.send(.accept(order.id))
                    }
                }
                return taken
            }
            let store = MemorySessionStore()
            let url = ServerURL(isSecure: false, host: "127.0.0.1", port: server.port)
            let accepted = try await publishAndFollow(server: url, store: store, phone: Live.freshPhone()) { sent in
                try #require(sent.developmentCode, "a --dev server returns the code")
            }
            #expect(accepted.status == .accepted)
            #expect(try store.load() != nil, "the session is kept for the next launch")

            // The next launch resumes the stored session: no SMS code is asked for.
            let again = try await publishAndFollow(server: url, store: store, phone: "unused") { _ in
                Issue.record("a stored session must not ask for a code")
                return ""
            }
            #expect(again.status == .accepted && again.id != accepted.id)
            await board.stop()
            #expect(await taker.value == [accepted.id, again.id])
            await runner.disconnect()
        }
    }
}

@Suite struct ReadmeTests {
    @Test func theReadmeShowsTheExampleExactlyAsItIsCompiled() throws {
        let root = ProtocolExamples.packageRoot
        let readme = try String(contentsOf: root.appendingPathComponent("Sources/BangbangClient/README.md"), encoding: .utf8)
        let example = try String(contentsOf: root.appendingPathComponent("Tests/BangbangClientTests/ReadmeExample.swift"),
                                 encoding: .utf8)
        #expect(readme.contains("```swift\n" + example + "```\n"),
                "Sources/BangbangClient/README.md must show Tests/BangbangClientTests/ReadmeExample.swift verbatim")
    }
}
