// A TCP relay between the library and the server, on the project's own sockets, so a test can
// take the network away from under a connection: `cut()` resets every relayed connection (the
// phone lost its signal), `freeze()` keeps them open but carries nothing more (a dead NAT path,
// noticed only by pings).
import Foundation
import SocketServer

final class TCPRelay: @unchecked Sendable {
    // Confinement: `pairs` and `isFrozen` are touched only on the server's single loop; `lock`
    // guards `accepted`, read by tests.
    private var server: TCPServer!
    private let loop: EventLoop
    private var pairs: [RelaySide] = []
    private var isFrozen = false
    private let lock = NSLock()
    private var acceptedCount = 0
    let upstreamPort: Int
    private(set) var port = 0

    init(to upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        var configuration = SocketServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.eventLoopCount = 1
        let group = EventLoopGroup(count: 1)
        loop = group.loops[0]
        // Weak: connections accepted just before the relay went away are closed, not relayed.
        server = TCPServer(configuration: configuration, group: group) { [weak self] connection in
            guard let self else {
                connection.close(flushFirst: false)
                return RelaySide(relay: nil)
            }
            return self.accept(connection)
        }
        port = try server.start()[0].port
    }

    var accepted: Int { lock.withLock { acceptedCount } }

    private func accept(_ downstream: Connection) -> ConnectionHandler {
        lock.withLock { acceptedCount += 1 }
        let client = RelaySide(relay: self)
        let upstream = RelaySide(relay: self)
        client.peer = upstream
        upstream.peer = client
        pairs += [client, upstream]
        do {
            upstream.connection = try SocketClient.connect(host: "127.0.0.1", port: upstreamPort, loop: loop, handler: upstream)
        } catch {
            downstream.close(flushFirst: false)
        }
        return client
    }

    var forwards: Bool { !isFrozen }

    /// Resets every relayed connection at once.
    func cut() async {
        await onLoop {
            for side in self.pairs { side.connection?.close(flushFirst: false) }
            self.pairs.removeAll()
        }
    }

    /// From now on nothing passes, and nothing is closed.
    func freeze() async { await onLoop { self.isFrozen = true } }

    /// Carries traffic again (new connections work; frozen ones have lost what was dropped).
    func thaw() async {
        await onLoop {
            self.isFrozen = false
            for side in self.pairs { side.connection?.close(flushFirst: false) }
            self.pairs.removeAll()
        }
    }

    private func onLoop(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute {
                work()
                done.resume()
            }
        }
    }

    func stop() { server.stop(closeConnections: true, flushFirst: false) }

    deinit { stop() }
}

/// One side of a relayed pair. Confinement: the relay's loop. The relay is weak: its
/// connections close on the loop after a test has let go of it, and then nothing is forwarded.
final class RelaySide: ConnectionHandler {
    weak var relay: TCPRelay?
    weak var peer: RelaySide?
    var connection: Connection?
    private var pendingBeforeOpen: [UInt8] = []

    init(relay: TCPRelay?) { self.relay = relay }

    func connectionDidOpen(_ connection: Connection) {
        self.connection = connection
        if let peer, !peer.pendingBeforeOpen.isEmpty {
            connection.send(peer.pendingBeforeOpen)
            peer.pendingBeforeOpen.removeAll()
        }
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        self.connection = connection
        guard relay?.forwards == true else { return }
        if let target = peer?.connection, target.isOpen {
            target.send(Array(bytes))
        } else {
            pendingBeforeOpen.append(contentsOf: bytes)
        }
    }

    func connectionDidDrain(_ connection: Connection) {}
    func connectionDeadlineReached(_ connection: Connection) {}

    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        self.connection = nil
        guard relay?.forwards == true else { return }
        peer?.connection?.close(flushFirst: true)
    }
}
