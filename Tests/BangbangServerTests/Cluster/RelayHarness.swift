// Two (or more) real servers of one cluster on loopback, sharing a real nats-server, with an
// `OwnerDirectory` the test sets, and WebSocket clients that speak the Bangbang protocol to
// any of them.
import BangbangProtocol
import Foundation
import Glibc
import NATSClient
import NATSTestSupport
import SocketServer
import Synchronization
import Testing
import TestSupport
import WebSocketProtocol
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

/// Who owns the partition, as the test says.
final class TestOwnerDirectory: OwnerDirectory {
    let localNodeID: String
    private let state: Mutex<(owner: String?, handlers: [@Sendable (String?) -> Void])>

    init(localNodeID: String, owner: String?) {
        self.localNodeID = localNodeID
        state = Mutex((owner, []))
    }

    var currentOwner: String? { state.withLock { $0.owner } }

    func onOwnerChange(_ handler: @escaping @Sendable (String?) -> Void) {
        state.withLock { $0.handlers.append(handler) }
    }

    func announce(_ owner: String?) {
        let handlers = state.withLock { state in
            state.owner = owner
            return state.handlers
        }
        for handler in handlers { handler(owner) }
    }
}

/// One node: a `Server` on a temporary data directory, its NATS connection and its directory.
final class RelayTestNode: @unchecked Sendable {
    static let adminPhone = "+8613000000000"

    let name: String
    let server: Server
    let directory: TestOwnerDirectory
    let nats: NATSConnection
    let port: Int
    let relay: ClusterRelay
    private let dataDirectory: String

    init(name: String, owner: String?, nats addresses: [NATSServerAddress], eventLoops: Int = 2,
         timings: RelayTimings = RelayTimings()) async throws {
        self.name = name
        dataDirectory = try makeTemporaryDirectory("bangbang-relay-\(name)")
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.dataDirectory = dataDirectory
        configuration.fsyncPolicy = .never
        configuration.isDevelopment = true
        configuration.servesWeb = false
        configuration.eventLoops = eventLoops
        // The latency measurement sends requests back to back.
        configuration.requestsPerSecond = 0
        configuration.adminPhones = [Self.adminPhone]
        configuration.natsServers = addresses.map(\.description)
        configuration.nodeID = name
        server = try Server(configuration: configuration, logger: Logger(level: .warning, sink: { _ in }))
        directory = TestOwnerDirectory(localNodeID: name, owner: owner)
        nats = NATSConnection(configuration: NATSConfiguration(servers: addresses, name: name))
        try await nats.connect()
        relay = try server.enableRelay(directory: directory, connection: nats, timings: timings)
        port = try #require(server.start().first?.port)
    }

    private var isNATSClosed = false

    /// Cuts the node off NATS without a word (as a crash does), leaving the server running.
    func dropNATS() async {
        guard !isNATSClosed else { return }
        isNATSClosed = true
        await nats.close()
    }

    func stop() async {
        relay.stop()
        server.shutdown(timeout: .seconds(1))
        await dropNATS()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    func connect() async throws -> ProtocolClient {
        try await ProtocolClient.connect(port: port)
    }
}

/// A Bangbang protocol client over the tests' WebSocket client: requests with ids, replies
/// matched to them, events kept for `waitEvent`.
final class ProtocolClient: @unchecked Sendable {
    // Confinement: used by one test task at a time.
    private let socket: InteropClient
    private let loop = EventLoop()
    private var nextID: Int64 = 1
    private var pending: [JSONValue] = []
    private(set) var closeCode: CloseCode?
    /// How often to look for the next message: 2 ms by default, far less for measurements.
    var checkInterval: Duration = .milliseconds(2)

    private init(socket: InteropClient) {
        self.socket = socket
    }

    static func connect(port: Int) async throws -> ProtocolClient {
        let socket = InteropClient()
        let client = ProtocolClient(socket: socket)
        var generator = SystemRandomNumberGenerator()
        socket.prepare(handshake: ClientHandshake(host: "127.0.0.1:\(port)", path: "/ws", subprotocols: ["bangbang.v1"],
                                                  using: &generator))
        try SocketClient.connect(host: "127.0.0.1", port: port, loop: client.loop, handler: socket)
        guard await socket.waitForEstablished() != nil else { throw SessionHarnessError(message: "no WebSocket on port \(port)") }
        return client
    }

    func send(_ text: String) {
        socket.send { socket, output in socket.send(text: text, into: &output) }
    }

    /// The reply to a request for `op` (nil after 10 s without one).
    func call(_ op: String, _ data: String = "{}") async -> JSONValue? {
        let id = nextID
        nextID += 1
        send(#"{"id":\#(id),"op":"\#(op)","data":\#(data)}"#)
        return await next { $0["id"] == .integer(id) }
    }

    func ok(_ op: String, _ data: String = "{}") async throws -> JSONValue {
        let reply = try #require(await call(op, data), "no reply to \(op)")
        guard reply.isSuccess, let result = reply["data"] else { throw SessionHarnessError(message: "\(op) failed: \(reply)") }
        return result
    }

    /// The first event matching `predicate` (nil after 10 s).
    func waitEvent(_ predicate: (JSONValue) -> Bool) async -> JSONValue? {
        await next { $0["event"] != nil && predicate($0) }
    }

    /// The close code the server sent (nil when the connection did not close within 10 s).
    func waitForClose() async -> CloseCode? {
        while closeCode == nil {
            guard receiveOne(await socket.nextEvent(checkingEvery: checkInterval)) else { break }
        }
        return closeCode
    }

    private func next(_ matches: (JSONValue) -> Bool) async -> JSONValue? {
        while true {
            if let index = pending.firstIndex(where: matches) { return pending.remove(at: index) }
            guard closeCode == nil, receiveOne(await socket.nextEvent(checkingEvery: checkInterval)) else { return nil }
        }
    }

    /// False when nothing came.
    private func receiveOne(_ event: WebSocketEvent?) -> Bool {
        switch event {
        case nil: return false
        case .text(let bytes)?:
            if let message = try? JSONParser.parse(bytes) { pending.append(message) }
        case .closed(let code, _, _)?:
            closeCode = code
        default:
            break
        }
        return true
    }

    func close() {
        socket.send { socket, output in socket.close(code: .normalClosure, reason: "bye", into: &output) }
    }

    func logIn(_ phone: String) async throws -> JSONValue {
        let issued = try await ok("auth.request_code", #"{"phone":"\#(phone)"}"#)
        guard case .string(let code)? = issued["dev_code"] else { throw SessionHarnessError(message: "no code: \(issued)") }
        return try await ok("auth.login_code", #"{"phone":"\#(phone)","code":"\#(code)","device":"test"}"#)
    }
}

/// Connects `descriptor` to 127.0.0.1:`port`; false if refused.
private func connectToLoopback(_ descriptor: Int32, port: Int) -> Bool {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// The head of the server's answer to a WebSocket upgrade on `/ws` (nil: no answer).
func upgradeAnswer(port: Int) -> String? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    defer { Glibc.close(descriptor) }
    guard connectToLoopback(descriptor, port: port) else { return nil }
    let request = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: bangbang.v1\r\n\r\n"
    _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
    var buffer = [UInt8](repeating: 0, count: 1024)
    let count = recv(descriptor, &buffer, buffer.count, 0)
    guard count > 12 else { return nil }
    return String(decoding: buffer[..<count], as: UTF8.self)
}

/// The body of `GET /metrics` on `port` (nil: no answer within 5 s).
func metricsText(port: Int) -> String? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    defer { Glibc.close(descriptor) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connectToLoopback(descriptor, port: port) else { return nil }
    let request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    while true {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { break }
        answer += buffer[..<count]
    }
    let text = String(decoding: answer, as: UTF8.self)
    guard text.hasPrefix("HTTP/1.1 200"), let body = text.range(of: "\r\n\r\n") else { return nil }
    return String(text[body.upperBound...])
}

/// The value of the sample `name` (with its labels, if any) in `/metrics` on `port`.
func metric(_ name: String, port: Int) -> Int? {
    guard let text = metricsText(port: port) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
        return Int(line.dropFirst(name.count + 1))
    }
    return nil
}
