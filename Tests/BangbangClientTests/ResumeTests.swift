// Resume semantics against a scripted server: the replay comes before the reply and reaches
// the app in order and once; a gap is refilled by resuming again; `resync` tells the app to
// refetch; the position is saved only once the app has processed an event; a refused session
// logs out and the connection stays up.
import BangbangProtocol
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

/// Collects a connection's updates on a task of its own, acknowledging each as it goes.
final class UpdateRecorder: @unchecked Sendable {
    // Confinement: `lock` guards `seen`.
    private let lock = NSLock()
    private var seen: [ConnectionUpdate] = []
    private var task: Task<Void, Never>?

    init(_ connection: BangbangConnection) {
        task = Task { [weak self] in
            for await update in connection.updates { self?.lock.withLock { self?.seen.append(update) } }
        }
    }

    var updates: [ConnectionUpdate] { lock.withLock { seen } }
    var eventSeqs: [Int64] { updates.compactMap { if case .event(let event) = $0 { event.seq } else { nil } } }

    /// The updates other than state changes.
    var essential: [ConnectionUpdate] { updates.filter { if case .stateChanged = $0 { false } else { true } } }

    func stop() { task?.cancel() }
}

@Suite(.timeLimit(.minutes(1))) struct ResumeTests {
    /// A server that resumes a session with the events it holds, in order, then replies; it
    /// knows events 1 through `head`.
    final class Server: @unchecked Sendable {
        // Confinement: `lock` guards `head` and `resync`.
        private let lock = NSLock()
        private var headSeq: Int64
        private var answersResync = false
        private var refusal: String?

        init(head: Int64) { headSeq = head }

        var head: Int64 {
            get { lock.withLock { headSeq } }
            set { lock.withLock { headSeq = newValue } }
        }

        func resyncNext() { lock.withLock { answersResync = true } }
        func refuseSessions(with code: String) { lock.withLock { refusal = code } }

        func play(_ request: JSONValue, _ channel: MockChannel) {
            guard request["op"] == "auth.resume" else {
                channel.reply(to: request, ["version": "test"])
                return
            }
            let (head, resync, refusal) = lock.withLock { () -> (Int64, Bool, String?) in
                defer { answersResync = false }
                return (headSeq, answersResync, self.refusal)
            }
            if let refusal {
                channel.fail(request, code: refusal)
                return
            }
            guard case .integer(let last)? = request["data"]?["last_seq"] else { return }
            if !resync, head >= 1, last <= head {
                // Overlapping what the client has (a duplicate), then what it missed.
                for seq in max(1, last)...head { channel.push(Wire.profileUpdated(seq)) }
            }
            channel.reply(to: request, ["user": Wire.user(5), "seq": .integer(head), "resync": .bool(resync)])
        }
    }

    static func connection(_ server: Server, store: MemorySessionStore, clock: ManualClock) -> (BangbangConnection, MockTransport) {
        let transport = MockTransport { request, channel in server.play(request, channel) }
        return (ReconnectTests.connection(transport, clock: clock, store: store), transport)
    }

    @Test func theReplayReachesTheAppBeforeTheConnectionIsOnlineInOrderAndOnce() async throws {
        let store = MemorySessionStore(StoredSession(token: "t", userID: 5, lastSeq: 3))
        let server = Server(head: 5)
        let clock = ManualClock()
        let (connection, transport) = Self.connection(server, store: store, clock: clock)
        let recorder = UpdateRecorder(connection)
        let user = try await connection.connect()
        #expect(user?.id == 5)
        #expect(transport.channels.first?.requests.first?["data"]?["last_seq"] == .integer(3))
        #expect(await eventually { recorder.eventSeqs == [4, 5] }, "event 3 was processed already: \(recorder.eventSeqs)")
        let online = try #require(recorder.updates.firstIndex(of: .stateChanged(.online)))
        let lastEvent = try #require(recorder.updates.lastIndex { if case .event = $0 { true } else { false } })
        #expect(lastEvent < online, "the replay comes before the resume reply: \(recorder.updates)")
        #expect(await eventually { (try? store.load())?.lastSeq == 5 }, "the position is saved as the app processes")
        recorder.stop()
        await connection.disconnect()
    }

    @Test func aGapInTheLiveStreamIsRefilledByResumingAgain() async throws {
        let store = MemorySessionStore(StoredSession(token: "t", userID: 5, lastSeq: 0))
        let server = Server(head: 2)
        let clock = ManualClock()
        let (connection, transport) = Self.connection(server, store: store, clock: clock)
        let recorder = UpdateRecorder(connection)
        try await connection.connect()
        #expect(await eventually { recorder.eventSeqs == [1, 2] })

        // Event 3 is lost on the way; 4 arrives: the connection must not show 4 without 3.
        server.head = 4
        let first = try #require(transport.channels.first)
        first.push(Wire.profileUpdated(4))
        #expect(await eventually { first.isClosed }, "a gap drops the connection, so a resume refills it")
        #expect(recorder.eventSeqs == [1, 2])
        #expect(await eventually { ReconnectTests.backoffSleep(clock) != nil })
        clock.advance(by: ReconnectTests.backoff.maximum)
        #expect(await eventually { recorder.eventSeqs == [1, 2, 3, 4] }, "\(recorder.eventSeqs)")
        #expect(transport.channels.last?.requests.first?["data"]?["last_seq"] == .integer(2))
        recorder.stop()
        await connection.disconnect()
    }

    @Test func resyncTellsTheAppToRefetchAndContinuesFromTheReply() async throws {
        let store = MemorySessionStore(StoredSession(token: "t", userID: 5, lastSeq: 3))
        let server = Server(head: 1_200)
        server.resyncNext()
        let clock = ManualClock()
        let (connection, _) = Self.connection(server, store: store, clock: clock)
        let recorder = UpdateRecorder(connection)
        try await connection.connect()
        #expect(await eventually { recorder.essential == [.resyncNeeded] }, "\(recorder.updates)")
        #expect(await eventually { (try? store.load())?.lastSeq == 1_200 })
        recorder.stop()
        await connection.disconnect()
    }

    @Test func aPositionTheServerDoesNotMatchIsAResyncToo() async throws {
        // The server's stream is behind what the app processed (its data was restored from an
        // older backup): the app must refetch, and the position follows the server.
        let store = MemorySessionStore(StoredSession(token: "t", userID: 5, lastSeq: 50))
        let server = Server(head: 10)
        let clock = ManualClock()
        let (connection, _) = Self.connection(server, store: store, clock: clock)
        let recorder = UpdateRecorder(connection)
        try await connection.connect()
        #expect(await eventually { recorder.essential == [.resyncNeeded] }, "\(recorder.updates)")
        #expect(await eventually { (try? store.load())?.lastSeq == 10 })
        recorder.stop()
        await connection.disconnect()
    }

    @Test func aRevokedSessionLogsOutForgetsTheTokenAndStaysOnline() async throws {
        let store = MemorySessionStore(StoredSession(token: "t", userID: 5, lastSeq: 3))
        let server = Server(head: 3)
        server.refuseSessions(with: "session_revoked")
        let clock = ManualClock()
        let (connection, _) = Self.connection(server, store: store, clock: clock)
        let recorder = UpdateRecorder(connection)
        let user = try await connection.connect()
        #expect(user == nil)
        #expect(await connection.state == .online)
        #expect(await eventually { recorder.essential == [.loggedOut(.revoked)] }, "\(recorder.updates)")
        #expect(try store.load() == nil)
        #expect(await !connection.isLoggedIn)
        _ = try await connection.send(RawRequest(operation: "info.get"))
        recorder.stop()
        await connection.disconnect()
    }

    @Test func anEventIsSavedAsProcessedOnlyWhenTheAppAsksForTheNext() async throws {
        let store = MemorySessionStore(StoredSession(token: "t", userID: 5, lastSeq: 0))
        let server = Server(head: 2)
        let clock = ManualClock()
        let (connection, _) = Self.connection(server, store: store, clock: clock)
        try await connection.connect()
        var iterator = connection.updates.makeAsyncIterator()
        var seqs: [Int64] = []
        while seqs.count < 2, let update = await iterator.next() {
            if case .event(let event) = update { seqs.append(event.seq) }
        }
        #expect(seqs == [1, 2])
        // Event 2 is in the app's hands, not yet processed: an app killed now sees it again.
        #expect(try store.load()?.lastSeq == 1)
        await connection.disconnect()
        _ = await iterator.next()  // the loop comes back for more: 2 is done
        #expect(try store.load()?.lastSeq == 2)
    }
}
