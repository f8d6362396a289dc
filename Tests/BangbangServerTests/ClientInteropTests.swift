// Our client mode (SocketClient + ClientHandshake + WebSocketConnection(role: .client)) against
// an independent server: Tests/e2e/echo_server.py, on the Python `websockets` library.
//
// The Python interpreter is $BANGBANG_PYTHON, else the package's `.build/pyenv/bin/python`
// (made by scripts/bootstrap.sh), else `python3` on the PATH. If none of them can import
// `websockets` the test fails and says so: an interop test that silently skips proves nothing.
import Foundation
import Glibc
import SocketServer
import Testing
import TestSupport
import WebSocketProtocol

@Suite(.serialized, .timeLimit(.minutes(1))) struct ClientInteropTests {
    @Test func clientExchangesMessagesPingsAndCloseWithWebsocketsServer() async throws {
        let server = try PythonEchoServer.start()
        defer { server.stop() }
        let client = InteropClient()
        let loop = EventLoop()
        var generator = SystemRandomNumberGenerator()
        let handshake = ClientHandshake(host: "127.0.0.1:\(server.port)", path: "/", deflate: DeflateOffer(),
                                        using: &generator)
        client.prepare(handshake: handshake)
        try SocketClient.connect(host: "127.0.0.1", port: server.port, loop: loop, handler: client)

        let agreed = try #require(await client.waitForEstablished(), "no handshake with the Python server")
        #expect(agreed.deflate != nil, "websockets offers permessage-deflate by default; we asked for it")

        client.send { socket, output in socket.send(text: "hello from Swift ✓", into: &output) }
        #expect(await client.nextEvent() == .text(Array("hello from Swift ✓".utf8)))

        let binary = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        client.send { socket, output in socket.send(binary: binary, into: &output) }
        #expect(await client.nextEvent() == .binary(binary))

        // Highly compressible: goes out deflated and comes back deflated (RFC 7692 both ways).
        let repetitive = String(repeating: "errand ", count: 20_000)
        client.send { socket, output in socket.send(text: repetitive, into: &output) }
        #expect(await client.nextEvent() == .text(Array(repetitive.utf8)))
        #expect(client.largestFrameSent < repetitive.utf8.count / 10, "the message was not sent compressed")

        client.send { socket, output in socket.sendPing(Array("ping-42".utf8), into: &output) }
        #expect(await client.nextEvent() == .pong(Array("ping-42".utf8)))

        client.send { socket, output in socket.close(code: .normalClosure, reason: "bye", into: &output) }
        #expect(await client.nextEvent() == .closed(code: .normalClosure, reason: "bye", initiatedByPeer: false))
        #expect(await client.waitForTransportClose() != nil, "the transport did not close after the handshake")
    }

    @Test func clientWithoutDeflateOfferGetsPlainFrames() async throws {
        let server = try PythonEchoServer.start()
        defer { server.stop() }
        let client = InteropClient()
        let loop = EventLoop()
        var generator = SystemRandomNumberGenerator()
        client.prepare(handshake: ClientHandshake(host: "127.0.0.1:\(server.port)", path: "/", using: &generator))
        try SocketClient.connect(host: "127.0.0.1", port: server.port, loop: loop, handler: client)
        let agreed = try #require(await client.waitForEstablished())
        #expect(agreed.deflate == nil)
        let text = String(repeating: "plain ", count: 1_000)
        client.send { socket, output in socket.send(text: text, into: &output) }
        #expect(await client.nextEvent() == .text(Array(text.utf8)))
        #expect(client.largestFrameSent > text.utf8.count)
        client.send { socket, output in socket.close(code: .goingAway, reason: "", into: &output) }
        #expect(await client.nextEvent() == .closed(code: .goingAway, reason: "", initiatedByPeer: false))
    }
}

// MARK: - The Python server

/// The reference echo server as a child process; stopped by closing its standard input.
private final class PythonEchoServer {
    let process: ChildProcess
    let port: Int

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The first interpreter that exists, in the order the file header gives.
    static func interpreter() -> [String] {
        if let explicit = ProcessInfo.processInfo.environment["BANGBANG_PYTHON"], !explicit.isEmpty {
            return [explicit]
        }
        let venv = packageRoot.appendingPathComponent(".build/pyenv/bin/python").path
        if FileManager.default.isExecutableFile(atPath: venv) { return [venv] }
        return ["/usr/bin/env", "python3"]
    }

    static func start() throws -> PythonEchoServer {
        let command = interpreter()
        let script = packageRoot.appendingPathComponent("Tests/e2e/echo_server.py").path
        let name = NSTemporaryDirectory() + "bangbang-echo-server-\(UUID().uuidString)"
        let (output, errors) = (name + ".out", name + ".err")
        defer { unlink(output); unlink(errors) }
        let process = try ChildProcess(executable: command[0], arguments: Array(command.dropFirst()) + [script],
                                       logPath: output, errorLogPath: errors, standardInput: .pipe)

        // The first line is "port=N"; anything else (an ImportError, say) ends the process.
        let line = process.waitForOutput(within: 15) { text in text.firstIndex(of: "\n").map { text[..<$0] } }
        guard let line, line.hasPrefix("port="), let port = Int(line.dropFirst(5)) else {
            process.signal(SIGTERM)
            process.waitUntilExit()
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw InteropSetupError(message: """
                the reference server did not start with \(command.joined(separator: " ")): \(stderr)
                The Python `websockets` package is needed: run scripts/bootstrap.sh, or point \
                BANGBANG_PYTHON at an interpreter that has it.
                """)
        }
        return PythonEchoServer(process: process, port: port)
    }

    func stop() {
        process.closeStandardInput()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.signal(SIGTERM) }
        process.waitUntilExit()
    }
}

private struct InteropSetupError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

// MARK: - The client handler

/// Drives one client connection on its loop: the handshake first, then the WebSocket state
/// machine. The test thread reads results under the lock and sends commands through the loop.
/// The relay tests (Cluster/) use it as their WebSocket client too.
final class InteropClient: ConnectionHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var handshake: ClientHandshake?
    private var socket: WebSocketConnection?
    private var connection: Connection?
    private var output = WebSocketOutput()
    private var established: ClientHandshakeResult?
    private var failure: String?
    private var events: [WebSocketEvent] = []
    private var closeReason: ConnectionCloseReason?
    private var largestFrame = 0

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    func prepare(handshake: ClientHandshake) { self.handshake = handshake }

    var largestFrameSent: Int { locked { largestFrame } }

    /// Runs a command against the state machine on the loop and writes what it produced.
    func send(_ command: @escaping @Sendable (WebSocketConnection, inout WebSocketOutput) -> Void) {
        guard let connection = locked({ connection }) else { return }
        let box = UncheckedSendable(self)
        connection.loop.execute {
            let client = box.value
            guard let socket = client.socket else { return }
            command(socket, &client.output)
            client.locked { client.largestFrame = max(client.largestFrame, client.output.outbound.count) }
            client.flush(connection)
        }
    }

    /// The agreed handshake, or nil if it failed, the connection ended or 10 seconds passed.
    func waitForEstablished() async -> ClientHandshakeResult? {
        _ = await poll { established != nil || failure != nil || closeReason != nil ? true : nil }
        return locked { established }
    }

    /// The next event, or nil after 10 seconds.
    /// `interval`: how often to look; the relay's latency figure looks far more often.
    func nextEvent(checkingEvery interval: Duration = .milliseconds(2)) async -> WebSocketEvent? {
        await poll(every: interval) { events.isEmpty ? nil : events.removeFirst() }
    }

    func waitForTransportClose() async -> ConnectionCloseReason? {
        await poll { closeReason }
    }

    /// Polls `probe` under the lock until it yields a value or 10 seconds pass.
    private func poll<T>(every interval: Duration = .milliseconds(2), _ probe: () -> T?) async -> T? {
        var value: T?
        _ = await eventually(interval: interval) {
            value = locked(probe)
            return value != nil
        }
        return value
    }

    private func flush(_ connection: Connection) {
        if !output.outbound.isEmpty { _ = connection.send(output.takeOutbound()) }
        let events = output.events
        let shouldClose = output.shouldCloseTransport
        output.removeAll()
        locked { self.events.append(contentsOf: events) }
        if shouldClose { connection.close(flushFirst: true) }
    }

    // MARK: ConnectionHandler

    func connectionDidOpen(_ connection: Connection) {
        locked { self.connection = connection }
        guard let handshake else { fatalError("internal inconsistency in InteropClient: no handshake") }
        _ = connection.send(handshake.requestBytes)
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        if let socket {
            socket.receive(bytes, into: &output)
            flush(connection)
            return
        }
        guard var handshake else { return }
        do {
            switch try handshake.receive(bytes) {
            case .needsMoreData:
                self.handshake = handshake
            case .established(let result):
                self.handshake = nil
                let socket = WebSocketConnection(role: .client, deflate: result.deflate)
                self.socket = socket
                locked { established = result }
                if !result.unconsumedBytes.isEmpty {
                    socket.receive(result.unconsumedBytes, into: &output)
                    flush(connection)
                }
            }
        } catch {
            self.handshake = nil
            locked { failure = "\(error)" }
            connection.close(flushFirst: false)
        }
    }

    func connectionDidDrain(_ connection: Connection) {}

    func connectionDeadlineReached(_ connection: Connection) {}

    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        if let socket, !socket.isClosed {
            socket.receiveEndOfInput(into: &output)
            let events = output.events
            output.removeAll()
            locked { self.events.append(contentsOf: events) }
        }
        locked { closeReason = reason }
    }
}

struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
