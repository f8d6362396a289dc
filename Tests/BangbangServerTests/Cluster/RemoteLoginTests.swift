// A login and a resume routed from a node to the account owner, over a real nats-server: the node
// reads who is logged in from the owner's reply, follows the user's stream for the connection, and
// sends the reply where a connection on the owner would get it: a resume's after the events the
// device missed, then what follows, the same bytes as the owner's own stream.
import BangbangCore
import BangbangProtocol
import Cluster
import JSON
import NATSTestSupport
import Synchronization
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct RemoteLoginTests {
    /// What a connection on the node was sent, in order: `event <n>` or `reply`.
    final class Connection: Sendable {
        let sent = Mutex<[String]>([])
        let gate: Mutex<LoginReplyGate>

        init(reply: [UInt8], login: RemoteLogin) {
            gate = Mutex(LoginReplyGate(reply: reply, login: login))
        }

        func record(_ outputs: [LoginReplyGate.Output]) {
            sent.withLock { sent in
                for output in outputs {
                    switch output {
                    case .reply: sent.append("reply")
                    case .event(let followed):
                        guard case .object(let event) = try? JSONParser.parse(followed.message.payload), case .integer(let number)? = event["seq"]
                        else { sent.append("unreadable"); continue }
                        sent.append("event \(number)")
                    }
                }
            }
        }

        var sink: FollowedStreams.Sink {
            FollowedStreams.Sink(deliver: { [self] events in record(gate.withLock { $0.pass(events) }) },
                                 lost: { [self] reason in sent.withLock { $0.append("lost: \(reason)") } })
        }
    }

    @Test func aResumeThroughANodeSendsTheMissedEventsThenTheReplyThenWhatFollows() async throws {
        let setup = try await FollowedStreamsTests.FollowSetup()
        let harness = setup.harness
        let requests = PartitionRequests(connection: setup.nodeConnection)
        let accounts = PartitionID(space: .accounts, index: 0)
        func route(_ operation: String, _ data: JSONValue) async throws -> [UInt8] {
            try await requests.request(accounts, payload: RoutedRequest(id: 3, operation: operation, data: data, actor: nil,
                                                                         clientAddress: "10.3.3.3").encoded()).get()
        }
        let phone = "13800138601"
        guard case .object(let issued) = try JSONParser.parse(try await route("auth.request_code", ["phone": .string(phone)])),
              case .object(let codeData)? = issued["data"], let code = codeData["dev_code"] else {
            Issue.record("no code")
            return
        }
        let loginReply = try await route("auth.login_code", ["phone": .string(phone), "code": code])
        let login = try #require(RemoteLogin.read(reply: loginReply))
        let app: Application = harness.app
        let now = harness.clock.now
        let sessions = await withCheckedContinuation { continuation in
            app.accounts.perform { continuation.resume(returning: $0.store.activeSessions(of: login.user, now: now)) }
        }
        #expect(sessions.map(\.id) == [login.session] && !login.isApprovedRunner && !login.resync)
        #expect(login.sequence == setup.kept(login.user).last && login.followsAfter(lastSeen: nil) == login.sequence)
        guard case .object(let message) = try JSONParser.parse(loginReply), case .object(let data)? = message["data"],
              case .string(let token)? = data["token"] else {
            Issue.record("no token")
            return
        }

        var open: [OrderID] = []
        for _ in 0..<4 { try await setup.change(login.user, open: &open) }
        try await eventually("four events numbered") { setup.kept(login.user).last == login.sequence + 4 }
        let lastSeen = login.sequence + 1
        let resumeReply = try await route("auth.resume", ["token": .string(token), "last_seq": .integer(Int64(lastSeen))])
        let resumed = try #require(RemoteLogin.read(reply: resumeReply, resumedWith: token))
        #expect(resumed.user == login.user && resumed.session == login.session && resumed.sequence == login.sequence + 4)
        let after = resumed.followsAfter(lastSeen: lastSeen)
        #expect(after == lastSeen)
        let connection = Connection(reply: resumeReply, login: resumed)
        connection.record(connection.gate.withLock { $0.start(after: after) })
        _ = setup.followed.follow(resumed.user, after: after, sink: connection.sink)
        try await eventually("the missed events and the reply") { connection.sent.withLock { $0.count } == 4 }
        try await setup.change(login.user, open: &open)
        try await eventually("the next event") { connection.sent.withLock { $0.count } == 5 }
        let numbers = (lastSeen + 1...resumed.sequence).map { "event \($0)" }
        #expect(connection.sent.withLock { $0 } == numbers + ["reply", "event \(resumed.sequence + 1)"],
                "as a connection on the owner: what it missed, the reply, then what follows")

        // Nothing missed, or a device ahead of the stream (told to resynchronize): the reply first.
        for seen in [resumed.sequence + 1, resumed.sequence + 9] {
            let reply = try await route("auth.resume", ["token": .string(token), "last_seq": .integer(Int64(seen))])
            let current = try #require(RemoteLogin.read(reply: reply, resumedWith: token))
            #expect(current.resync == (seen > current.sequence))
            var gate = LoginReplyGate(reply: reply, login: current)
            let first = gate.start(after: current.followsAfter(lastSeen: seen))
            guard case .reply? = first.first else {
                Issue.record("the reply is not first for last_seq \(seen)")
                continue
            }
        }
        #expect(RemoteLogin.read(reply: Array(#"{"error":{"code":"unauthenticated","message":"no"},"id":3,"ok":false}"#.utf8)) == nil)
        #expect(RemoteLogin.read(reply: resumeReply) == nil, "a resume's reply has no token of its own")
        await setup.stop()
    }
}
