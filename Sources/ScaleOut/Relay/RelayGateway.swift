// The gateway's side of the relay: clients of a node that does not own the partition keep their
// WebSocket here (handshake, deflate, pings, limits: `ClientConnection` as for any client) and
// their messages go to the owner, which sends back what they are to be sent.
//
// Theory of operation. A `RelayEndpoint` is made for each `/ws` upgrade while another node owns
// the partition; it takes a connection id (a counter, unique for this process, whose
// incarnation is in the gateway's subject) and sends `open` to `bb.relay.<owner>`, then each
// text message as `message` and finally `close`. The gateway listens on
// `bb.gateway.<node id>.<incarnation>` for the owner's frames: a `deliver` to one connection is
// sent as text, one to several is framed once (`SharedMessage`) and written to each on its own
// loop; `closeConnection` closes the client with the owner's code.
//
// The relayed clients close with 1012 (service restart), to reconnect and `auth.resume`, when
// the owner changes or goes away (`OwnerDirectory`), or when the owner has been silent for
// `ownerTimeoutMilliseconds`: once a second the gateway sends each owner an `alive` listing its
// connections there, and the owner answers. The registration of a connection and its `open`
// (and its removal and `close`) are published under the gateway's lock, so an `alive` never
// lists a connection whose `open` follows it on the wire.
//
// Confinement: the tables are under `state`'s lock (touched from every loop and the gateway's
// queue, where the NATS subscription delivers); `beatTimer` is made in `init` and only scheduled
// by `start` and cancelled by `stop`, each called once; each endpoint lives on its loop.
import BangbangApplication
import Dispatch
import NATSClient
import PartitionOwner
import RelayProtocol
import SocketServer
import Synchronization
import WebSocketProtocol
import WebSocketServer

package final class RelayGateway: @unchecked Sendable {
    let node: RelayNode
    private let connection: NATSConnection
    private let timings: RelayTimings
    private let metrics: RelayMetrics
    private let logger: Logger
    private let queue = DispatchQueue(label: "bangbang.relay-gateway")
    private let beatTimer: DispatchSourceTimer

    private struct Entry {
        let endpoint: RelayEndpoint
        let loop: EventLoop
        let owner: String
    }

    private struct State {
        var nextConnectionID: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
        /// When each owner with relayed connections was last heard from (or first used).
        var lastHeard: [String: Int64] = [:]
        var subscription: NATSSubscription?
    }

    private let state = Mutex(State())

    init(node: RelayNode, connection: NATSConnection, timings: RelayTimings, metrics: RelayMetrics = RelayMetrics(),
         logger: Logger) {
        self.node = node
        self.connection = connection
        self.timings = timings
        self.metrics = metrics
        self.logger = logger
        beatTimer = DispatchSource.makeTimerSource(queue: queue)
        // Resumed unscheduled at once: a suspended source must never be released.
        beatTimer.resume()
    }

    /// Relayed connections open now (any thread).
    var connectionCount: Int { state.withLock { $0.entries.count } }

    package func start() throws(NATSClientError) {
        let subscription = try connection.subscribe(to: node.gatewaySubject, deliveringOn: queue) { [weak self] message in
            self?.receive(message)
        }
        state.withLock { $0.subscription = subscription }
        beatTimer.schedule(deadline: .now() + .milliseconds(timings.aliveIntervalMilliseconds),
                           repeating: .milliseconds(timings.aliveIntervalMilliseconds))
        beatTimer.setEventHandler { [weak self] in self?.beat() }
    }

    func stop() {
        let subscription = state.withLock { state in
            defer { state.subscription = nil }
            return state.subscription
        }
        subscription?.unsubscribe()
        beatTimer.cancel()
    }

    func makeEndpoint(owner: String) -> RelayEndpoint {
        RelayEndpoint(gateway: self, owner: owner)
    }

    // MARK: From the endpoints (on their loops)

    /// Registers the endpoint and sends `open`; false when it could not be sent.
    func open(_ endpoint: RelayEndpoint, on loop: EventLoop, client: RelayedClient) -> UInt64? {
        state.withLock { state -> UInt64? in
            let id = state.nextConnectionID
            state.nextConnectionID += 1
            guard send([.open(connection: id, client: client)], to: endpoint.owner) else { return nil }
            state.entries[id] = Entry(endpoint: endpoint, loop: loop, owner: endpoint.owner)
            metrics.relayedConnections.add(1)
            if state.lastHeard[endpoint.owner] == nil { state.lastHeard[endpoint.owner] = EventLoop.now }
            return id
        }
    }

    func forward(_ text: [UInt8], from id: UInt64, to owner: String) -> Bool {
        send([.message(connection: id, text: text)], to: owner)
    }

    package func closed(_ id: UInt64) {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: id) else { return }
            metrics.relayedConnections.add(-1)
            _ = send([.close(connection: id)], to: entry.owner)
        }
    }

    private func send(_ frames: [RelayFrame], to owner: String) -> Bool {
        do {
            try connection.publish(RelayNode.ownerSubject(owner), payload: node.envelope(frames))
            metrics.envelopesOut.increment()
            return true
        } catch {
            metrics.publishFailures.increment()
            logger.warning("relay_publish_failed", ["subject": RelayNode.ownerSubject(owner), "error": "\(error)"])
            return false
        }
    }

    // MARK: Owners

    /// Closes, with 1012, every relayed connection whose owner is no longer `owner` (any thread).
    func ownerChanged(to owner: String?) {
        closeAll(where: { $0 != owner }, reason: "partition owner changed; reconnect")
    }

    private func closeAll(where isStale: (String) -> Bool, reason: String) {
        let stale = state.withLock { state -> [Entry] in
            let stale = state.entries.filter { isStale($0.value.owner) }
            metrics.relayedConnections.add(-stale.count)
            for (id, entry) in stale {
                state.entries[id] = nil
                _ = send([.close(connection: id)], to: entry.owner)
            }
            for owner in Set(stale.values.map(\.owner)) where !state.entries.values.contains(where: { $0.owner == owner }) {
                state.lastHeard[owner] = nil
            }
            return Array(stale.values)
        }
        for entry in stale {
            entry.loop.execute { entry.endpoint.close(code: .serviceRestart, reason: reason) }
        }
    }

    /// Once a second: tell each owner which connections are relayed to it; close those of an
    /// owner that stopped answering.
    private func beat() {
        let now = EventLoop.now
        let silent = state.withLock { state -> Set<String> in
            var byOwner: [String: [UInt64]] = [:]
            for (id, entry) in state.entries { byOwner[entry.owner, default: []].append(id) }
            for (owner, ids) in byOwner { _ = send([.alive(connections: ids.sorted())], to: owner) }
            for owner in state.lastHeard.keys where byOwner[owner] == nil { state.lastHeard[owner] = nil }
            return Set(state.lastHeard.filter { now - $0.value > Int64(timings.ownerTimeoutMilliseconds) }.keys)
        }
        guard !silent.isEmpty else { return }
        logger.warning("relay_owner_silent", ["owners": silent.sorted().joined(separator: ",")])
        closeAll(where: { silent.contains($0) }, reason: "partition owner not answering; reconnect")
    }

    // MARK: Frames from owners (on the gateway's queue)

    private func receive(_ message: NATSMessage) {
        guard let envelope = RelayCodec.received(message, travelling: .toGateway, metrics: metrics, logger: logger) else { return }
        // Looked up once, under the lock, for the whole envelope: copying the table instead
        // would make the next open or close copy every entry.
        let recipients = state.withLock { state -> [[Entry]]? in
            // An owner none of our connections is relayed to (any more) has nobody to reach here.
            guard state.lastHeard[envelope.sender] != nil else { return nil }
            state.lastHeard[envelope.sender] = EventLoop.now
            return envelope.frames.map { frame in
                let ids: [UInt64]
                switch frame {
                case .deliver(let connections, _): ids = connections
                case .closeConnection(let connection, _, _): ids = [connection]
                default: ids = []
                }
                return ids.compactMap { state.entries[$0] }.filter { $0.owner == envelope.sender }
            }
        }
        guard let recipients else {
            metrics.envelopesRefused.increment()
            return
        }
        for (frame, entries) in zip(envelope.frames, recipients) {
            switch frame {
            case .deliver(_, let text):
                deliver(text, to: entries)
            case .closeConnection(_, let code, let reason):
                guard let entry = entries.first else { continue }
                entry.loop.execute { entry.endpoint.close(code: CloseCode(rawValue: code), reason: reason) }
            case .alive:
                break
            case .open, .message, .close:
                fatalError("internal inconsistency in RelayGateway: the decoder let an owner-bound frame through")
            }
        }
    }

    /// One recipient: plain text. Several: framed once, then written on each one's loop.
    private func deliver(_ text: [UInt8], to recipients: [Entry]) {
        guard recipients.count > 1 else {
            guard let entry = recipients.first else { return }
            entry.loop.execute { entry.endpoint.deliver(text: text) }
            return
        }
        let message = SharedMessage(text: text)
        var byLoop: [ObjectIdentifier: (EventLoop, [RelayEndpoint])] = [:]
        for entry in recipients { byLoop[ObjectIdentifier(entry.loop), default: (entry.loop, [])].1.append(entry.endpoint) }
        for (loop, endpoints) in byLoop.values {
            loop.execute { for endpoint in endpoints { endpoint.deliver(shared: message) } }
        }
    }
}

/// One relayed client on the gateway: what `ClientConnection` runs on `/ws` when another node
/// owns the partition. Confined to the connection's loop.
package final class RelayEndpoint: WebSocketEndpoint, @unchecked Sendable {
    private let gateway: RelayGateway
    let owner: String
    private weak var channel: WebSocketChannel?
    private var id: UInt64?

    init(gateway: RelayGateway, owner: String) {
        self.gateway = gateway
        self.owner = owner
    }

    package func webSocketDidOpen(_ channel: WebSocketChannel) {
        self.channel = channel
        let origin = channel.clientOrigin
        let client = RelayedClient(address: origin.address.description, isIdentified: origin.isIdentified, usedTLS: origin.usedTLS)
        id = gateway.open(self, on: channel.loop, client: client)
        if id == nil { channel.close(code: .tryAgainLater, reason: "cannot reach the partition owner; try again") }
    }

    package func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {
        guard let id else { return }
        if !gateway.forward(bytes, from: id, to: owner) {
            channel.close(code: .tryAgainLater, reason: "cannot reach the partition owner; try again")
        }
    }

    package func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) {
        channel.close(code: .unsupportedData, reason: "this endpoint speaks JSON text messages only")
    }

    package func webSocketDidClose(_ channel: WebSocketChannel) {
        if let id { gateway.closed(id) }
        id = nil
        self.channel = nil
    }

    func deliver(text: [UInt8]) { channel?.send(text: text) }
    func deliver(shared message: SharedMessage) { channel?.send(shared: message) }
    package func close(code: CloseCode, reason: String) { channel?.close(code: code, reason: reason) }
}
