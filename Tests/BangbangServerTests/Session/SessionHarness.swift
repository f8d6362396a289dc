// A `ClientSession` on a real `Application` (ApplicationHarness) with a channel that records
// what the session sends instead of writing to a socket: requests go in as text messages on
// the session's loop, replies come back through its outbox, as on a live connection.
import BangbangProtocol
import Foundation
import Glibc
import Synchronization
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import Forwarding
@testable import SocketServer
import WebSocketProtocol
import WebSocketServer

/// Records sends and closes; open until the session closes it.
final class RecordingChannel: WebSocketChannel, @unchecked Sendable {
    let connection: Connection
    let clientOrigin: ClientOrigin
    var loop: EventLoop { connection.loop }
    var connectionID: UInt64 { connection.id }
    private let state = Mutex<(texts: [[UInt8]], pushes: [[UInt8]], close: CloseCode?)>(([], [], nil))

    init(loop: EventLoop, address: String = "10.1.2.3") {
        connection = Connection(descriptor: -1, remoteAddress: .v4(sockaddr_in()), loop: loop,
                                context: ConnectionContext(options: ConnectionOptions()), tls: nil, handler: nil,
                                state: .open)
        clientOrigin = ClientOrigin(peer: IPAddress(address)!, proxyHeader: nil, connectionUsesTLS: false)
    }

    var isOpen: Bool { state.withLock { $0.close == nil } }
    var texts: [[UInt8]] { state.withLock { $0.texts } }
    /// The shared messages (pushes) sent, as their payloads.
    var pushes: [[UInt8]] { state.withLock { $0.pushes } }
    var closeCode: CloseCode? { state.withLock { $0.close } }

    func send(text bytes: [UInt8]) { state.withLock { $0.texts.append(bytes) } }
    func send(binary bytes: [UInt8]) { Issue.record("the session sent a binary message") }
    func send(shared message: SharedMessage) { state.withLock { $0.pushes.append(message.payload) } }
    func cork() {}
    func uncork() {}
    func close(code: CloseCode, reason: String) { state.withLock { $0.close = code } }
}

final class SessionHarness: @unchecked Sendable {
    let application: ApplicationHarness
    let loop: EventLoop
    let registry: LoopRegistry
    let session: ClientSession
    let channel: RecordingChannel
    private var nextID: Int64 = 1

    /// A session on a new application, or on `application` beside its other sessions; on its
    /// own loop, or on `registry`'s beside the sessions there.
    init(sharing application: ApplicationHarness? = nil, on registry: LoopRegistry? = nil) throws {
        self.application = try application ?? ApplicationHarness()
        let app = self.application.app!
        let registry = registry ?? LoopRegistry(loop: EventLoop(), metrics: app.metrics, watcherTotal: app.publisher.boards.feedWatchers,
                                                presence: app.publisher.accounts.presence)
        self.registry = registry
        loop = registry.loop
        session = ClientSession(app: app, registry: registry)
        channel = RecordingChannel(loop: loop)
        let (session, channel) = (session, channel)
        loop.queue.sync { session.webSocketDidOpen(channel) }
    }

    /// Sends `text` as one message and returns the next reply (nil if none came).
    func exchange(_ text: String) async -> JSONValue? {
        let before = channel.texts.count
        let (session, channel) = (session, channel)
        loop.queue.sync { session.webSocket(channel, didReceiveText: Array(text.utf8)) }
        guard await eventually({ channel.texts.count > before }) else { return nil }
        return try? JSONParser.parse(channel.texts[before])
    }

    /// Sends a request for `op` with `data` (JSON text) and returns its reply.
    func call(_ op: String, _ data: String = "{}") async -> JSONValue? {
        let id = nextID
        nextID += 1
        let reply = await exchange(#"{"id":\#(id),"op":"\#(op)","data":\#(data)}"#)
        #expect(reply?["id"] == .integer(id), "the reply answers another request")
        return reply
    }
}

extension SessionHarness {
    /// Logs the session in with the code the development SMS provider reveals; the reply.
    func logIn(_ phone: String) async throws -> JSONValue {
        let issued = try #require(await call("auth.request_code", #"{"phone":"\#(phone)"}"#))
        guard case .string(let code)? = issued["data"]?["dev_code"] else {
            throw SessionHarnessError(message: "no code revealed: \(issued)")
        }
        return try #require(await call("auth.login_code", #"{"phone":"\#(phone)","code":"\#(code)","device":"test"}"#))
    }
}

struct SessionHarnessError: Error { let message: String }

extension JSONValue {
    /// The error code of a failure reply.
    var errorCode: String? {
        if case .string(let code)? = self["error"]?["code"] { return code }
        return nil
    }

    var isSuccess: Bool { self["ok"] == .bool(true) }
}
