// A transport whose server is a script in the test: it refuses or accepts connections as told,
// records what the connection sends, and pushes what the script answers.
import BangbangProtocol
import Foundation
@testable import BangbangClient

final class MockTransport: WebSocketTransport, @unchecked Sendable {
    // Confinement: `lock` guards every stored property.
    typealias Script = @Sendable (_ request: JSONValue, _ channel: MockChannel) -> Void

    private let lock = NSLock()
    private var refusals: Int
    private var attemptCount = 0
    private var opened: [MockChannel] = []
    private let script: Script

    /// Refuses the first `refusals` connects, then accepts every one; `script` plays the server.
    init(refusals: Int = 0, script: @escaping Script) {
        self.refusals = refusals
        self.script = script
    }

    var attempts: Int { lock.withLock { attemptCount } }
    var channels: [MockChannel] { lock.withLock { opened } }

    func refuse(next count: Int) { lock.withLock { refusals = count } }

    func connect(to endpoint: ServerEndpoint) async throws(TransportError) -> any TransportChannel {
        let channel: MockChannel? = lock.withLock {
            attemptCount += 1
            if refusals > 0 {
                refusals -= 1
                return nil
            }
            let channel = MockChannel(script: script)
            opened.append(channel)
            return channel
        }
        guard let channel else { throw TransportError("connection refused") }
        return channel
    }
}

final class MockChannel: TransportChannel, @unchecked Sendable {
    // Confinement: `lock` guards every stored property but the stream and its sink.
    let events: AsyncStream<TransportEvent>
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let script: MockTransport.Script
    private let lock = NSLock()
    private var received: [JSONValue] = []
    private var pingCount = 0
    private var isOver = false
    /// Answer pings (a live network); off to simulate one that died silently.
    var answersPings = true

    init(script: @escaping MockTransport.Script) {
        self.script = script
        (events, sink) = AsyncStream.makeStream()
    }

    var requests: [JSONValue] { lock.withLock { received } }
    var operations: [String] { requests.compactMap { if case .string(let op)? = $0["op"] { op } else { nil } } }
    var pings: Int { lock.withLock { pingCount } }
    var isClosed: Bool { lock.withLock { isOver } }

    func send(text: [UInt8]) {
        guard let request = try? JSONParser.parse(text) else { return }
        let isLive = lock.withLock {
            received.append(request)
            return !isOver
        }
        if isLive { script(request, self) }
    }

    func ping() {
        let answers = lock.withLock {
            pingCount += 1
            return answersPings && !isOver
        }
        if answers { sink.yield(.pong) }
    }

    func close() { end(code: 1000, reason: "") }
    func abort() { end(code: nil, reason: "aborted") }

    /// The server (or the network) ends the channel.
    func end(code: UInt16?, reason: String) {
        let wasOpen = lock.withLock {
            defer { isOver = true }
            return !isOver
        }
        guard wasOpen else { return }
        sink.yield(.closed(code: code, reason: reason))
        sink.finish()
    }

    /// A message from the server.
    func push(_ message: JSONValue) {
        guard !isClosed else { return }
        sink.yield(.text(JSONWriter.encode(message)))
    }

    func reply(to request: JSONValue, _ data: JSONValue) {
        push(["id": request["id"] ?? .null, "ok": true, "data": data])
    }

    func fail(_ request: JSONValue, code: String, message: String = "refused") {
        push(["id": request["id"] ?? .null, "ok": false, "error": ["code": .string(code), "message": .string(message)]])
    }
}

/// Wire pieces the scripts answer with.
enum Wire {
    static func user(_ id: Int64) -> JSONValue {
        ["id": .integer(id), "nickname": .string("用户\(id)"), "gender": "undisclosed", "is_verified_runner": false,
         "registered_at": 1_796_099_188_942]
    }

    static func profileUpdated(_ seq: Int64) -> JSONValue {
        ["event": "account.profile_updated", "seq": .integer(seq), "data": [:]]
    }

    static func order(_ id: Int64, revision: Int64, tip: Int64 = 300, createdAt: Int64 = 1_000) -> JSONValue {
        ["id": .integer(id), "type": "bounty", "status": "open", "publisher": 1, "campus": "North",
         "created_at": .integer(createdAt), "deadline": 9_000_000, "tip": .integer(tip),
         "details": ["title": "Carry a box", "description": "to dorm 3"],
         "timeline": [["status": "open", "at": .integer(createdAt), "actor": 1]], "revision": .integer(revision)]
    }

    static func feed(_ name: String, seq: Int64, _ data: JSONValue) -> JSONValue {
        ["event": .string(name), "type": "bounty", "seq": .integer(seq), "data": data]
    }
}
