// Shared test harness: a recording handler, an echo handler, loop hops and polling waits.
import Forwarding
import Foundation
import Glibc
import Platform
@testable import SocketServer

/// Records every event; optionally echoes what it receives. Events arrive on the loop, the
/// test reads them from its own task, hence the lock.
final class RecordingHandler: ConnectionHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var _openCount = 0
    private var _received: [UInt8] = []
    private var _drainCount = 0
    private var _deadlineCount = 0
    private var _closeReason: ConnectionCloseReason?
    private var _connection: Connection?
    private var _loopIndex: Int?
    private var _remoteAddress: SocketAddress?
    private var _proxyHeader: ProxyHeader?
    let echoes: Bool
    /// Runs on the loop after `connectionDidOpen` is recorded.
    var onOpen: (@Sendable (Connection) -> Void)?
    var onDeadline: (@Sendable (Connection) -> Void)?

    init(echoes: Bool = false) { self.echoes = echoes }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    var openCount: Int { locked { _openCount } }
    var received: [UInt8] { locked { _received } }
    var receivedCount: Int { locked { _received.count } }
    var drainCount: Int { locked { _drainCount } }
    var deadlineCount: Int { locked { _deadlineCount } }
    var closeReason: ConnectionCloseReason? { locked { _closeReason } }
    var connection: Connection? { locked { _connection } }
    var loopIndex: Int? { locked { _loopIndex } }
    var remoteAddress: SocketAddress? { locked { _remoteAddress } }
    var proxyHeader: ProxyHeader? { locked { _proxyHeader } }

    func connectionDidOpen(_ connection: Connection) {
        locked {
            _openCount += 1
            _connection = connection
            _loopIndex = connection.loop.index
            _remoteAddress = connection.remoteAddress
            _proxyHeader = connection.proxyHeader
        }
        onOpen?(connection)
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        locked { _received.append(contentsOf: bytes) }
        if echoes { _ = connection.send(Array(bytes)) }
    }

    func connectionDidDrain(_ connection: Connection) {
        locked { _drainCount += 1 }
    }

    func connectionDeadlineReached(_ connection: Connection) {
        locked { _deadlineCount += 1 }
        onDeadline?(connection)
    }

    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        locked {
            precondition(_closeReason == nil, "connectionDidClose called twice")
            _closeReason = reason
        }
    }
}

/// Collects the server-side handlers a server creates.
final class HandlerCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var _handlers: [RecordingHandler] = []
    let echoes: Bool
    let onOpen: (@Sendable (Connection) -> Void)?
    /// Given to every handler before its connection opens, so no deadline can fire without it.
    let onDeadline: (@Sendable (Connection) -> Void)?

    init(echoes: Bool = true, onOpen: (@Sendable (Connection) -> Void)? = nil,
         onDeadline: (@Sendable (Connection) -> Void)? = nil) {
        self.echoes = echoes
        self.onOpen = onOpen
        self.onDeadline = onDeadline
    }

    var handlers: [RecordingHandler] {
        lock.lock()
        defer { lock.unlock() }
        return _handlers
    }

    func make(_ connection: Connection) -> ConnectionHandler {
        let handler = RecordingHandler(echoes: echoes)
        handler.onOpen = onOpen
        handler.onDeadline = onDeadline
        lock.lock()
        _handlers.append(handler)
        lock.unlock()
        return handler
    }
}

/// A counter usable from `@Sendable` fault rules.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    private var flag = false

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    var isSet: Bool {
        get { lock.lock(); defer { lock.unlock() }; return flag }
        set { lock.lock(); flag = newValue; lock.unlock() }
    }
}

/// Runs `body` on the connection's loop and returns its result.
func onLoop<T: Sendable>(_ connection: Connection, _ body: @escaping @Sendable (Connection) -> T) async -> T {
    await withCheckedContinuation { continuation in
        connection.loop.execute { continuation.resume(returning: body(connection)) }
    }
}

/// Starts a server on loopback with port 0.
func startServer(host: String = "127.0.0.1", collector: HandlerCollector,
                 configure: (inout SocketServerConfiguration) -> Void = { _ in }) throws -> (TCPServer, Int) {
    var configuration = SocketServerConfiguration(host: host, port: 0)
    configuration.eventLoopCount = 2
    configure(&configuration)
    let server = TCPServer(configuration: configuration) { collector.make($0) }
    let addresses = try server.start()
    return (server, addresses[0].port)
}

/// A plain blocking socket for playing a badly behaved peer.
struct RawSocket {
    let descriptor: Int32

    init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if let receiveBuffer {
            var size = receiveBuffer
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 { throw Errno(errno) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Reads until end of stream (or error/timeout); returns everything read and whether EOF was seen.
    func readToEnd() -> (bytes: [UInt8], sawEnd: Bool) {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                result.append(contentsOf: buffer[0..<count])
            } else {
                return (result, count == 0)
            }
        }
    }

    func close() { _ = Glibc.close(descriptor) }
}

/// Deterministic bytes whose order is checkable.
func pattern(count: Int, seed: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31 &+ seed) ^ ($0 >> 8)) }
}
