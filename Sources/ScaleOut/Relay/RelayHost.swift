// The owner's side of the relay: runs an unchanged `ClientSession` for every client a gateway
// node relays, while this node owns the partition.
//
// Theory of operation. While owning, the host subscribes to `bb.relay.<node id>`. Each envelope
// comes from one gateway incarnation; the host keeps, per gateway node, the incarnation it
// last heard and the relayed connections it opened for it:
//
//   open     → a `RelayChannel` + `ClientSession` on the next loop (round robin), attached to
//              that loop's `LoopRegistry`, so personal events and the feed reach it like any
//              local session;
//   message  → the session's `didReceiveText`, on its loop, in the order the gateway sent them;
//   close    → the session's `webSocketDidClose`;
//   alive    → the gateway lists what it holds: sessions it no longer lists are dropped (their
//              close frame was lost), listed ones the host does not know are answered with a
//              1012 close (their open was lost, or went to this node's previous incarnation);
//              the host answers with an `alive` of its own, which is the gateway's sign of life.
//
// NATS delivers one publisher's messages on one subject in order, so an `alive` reflects every
// frame its gateway sent before it. A frame for an unknown connection is answered with a 1012
// close. A new incarnation of a gateway node (it restarted) drops its predecessor's sessions at
// once; a gateway silent for `gatewayTimeoutMilliseconds` has its sessions dropped by the
// sweep. When the node stops owning, every relayed client is closed with 1012, so it reconnects
// (to whichever node) and resumes with `auth.resume`.
//
// A relayed client's address is the gateway's word for it and never counts as loopback: the
// admin secret (a loopback-only login) is refused through a relay.
//
// Confinement: the host's tables live on `queue`, a serial queue of its own, which is also where
// the NATS subscription delivers; each channel and session then lives on its loop.
import BangbangApplication
import Dispatch
import Forwarding
import NATSClient
import PartitionOwner
import RelayProtocol
import SocketServer
import WebSocketProtocol

package final class RelayHost: @unchecked Sendable {
    let node: RelayNode
    private let connection: NATSConnection
    private let registries: [LoopRegistry]
    private let outboxes: [RelayOutbox]
    private let makeSession: @Sendable (LoopRegistry) -> ClientSession
    private let timings: RelayTimings
    private let metrics: RelayMetrics
    private let logger: Logger
    let queue = DispatchQueue(label: "bangbang.relay-host")

    private struct Gateway {
        var incarnation: UInt64
        var lastHeard: Int64
        var channels: [UInt64: RelayChannel] = [:]
    }

    private var gateways: [String: Gateway] = [:]
    private var subscription: NATSSubscription?
    private var sweep: DispatchSourceTimer?
    private var nextLoop = 0

    init(node: RelayNode, connection: NATSConnection, registries: [LoopRegistry], timings: RelayTimings, metrics: RelayMetrics,
         logger: Logger, makeSession: @escaping @Sendable (LoopRegistry) -> ClientSession) {
        self.node = node
        self.connection = connection
        self.registries = registries
        self.outboxes = registries.map {
            RelayOutbox(loop: $0.loop, connection: connection, owner: node, maxEnvelopeBytes: timings.maxEnvelopeBytes,
                        metrics: metrics, logger: logger)
        }
        self.timings = timings
        self.metrics = metrics
        self.logger = logger
        self.makeSession = makeSession
    }

    /// Relayed sessions open now (any thread; waits for the host's queue).
    var sessionCount: Int { queue.sync { gateways.values.reduce(0) { $0 + $1.channels.count } } }

    // MARK: Owning

    /// Starts or stops serving relayed clients (any thread). Stopping closes each with 1012.
    func setOwning(_ isOwning: Bool) {
        queue.async { isOwning ? self.startServing() : self.stopServing() }
    }

    private func startServing() {
        guard subscription == nil else { return }
        do {
            subscription = try connection.subscribe(to: RelayNode.ownerSubject(node.nodeID), deliveringOn: queue) { [weak self] message in
                self?.receive(message)
            }
        } catch {
            logger.error("relay_subscribe_failed", ["subject": RelayNode.ownerSubject(node.nodeID), "error": "\(error)"])
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(timings.aliveIntervalMilliseconds),
                       repeating: .milliseconds(timings.aliveIntervalMilliseconds))
        timer.setEventHandler { [weak self] in self?.dropSilentGateways() }
        timer.resume()
        sweep = timer
        logger.info("relay_host_started", ["subject": RelayNode.ownerSubject(node.nodeID)])
    }

    private func stopServing() {
        subscription?.unsubscribe()
        subscription = nil
        sweep?.cancel()
        sweep = nil
        let sessions = gateways.values.reduce(0) { $0 + $1.channels.count }
        for name in Array(gateways.keys) { dropGateway(name, closingWith: (.serviceRestart, "partition owner changed; reconnect")) }
        if sessions > 0 { logger.info("relay_host_stopped", ["sessions_closed": sessions]) }
    }

    // MARK: Frames from gateways

    private func receive(_ message: NATSMessage) {
        guard let envelope = RelayCodec.received(message, travelling: .toOwner, metrics: metrics, logger: logger) else { return }
        let now = EventLoop.now
        if let known = gateways[envelope.sender], known.incarnation != envelope.incarnation {
            // The gateway restarted: its predecessor's clients are gone with it.
            dropGateway(envelope.sender, closingWith: nil)
        }
        gateways[envelope.sender, default: Gateway(incarnation: envelope.incarnation, lastHeard: now)].lastHeard = now
        let gateway = RelayNode(nodeID: envelope.sender, incarnation: envelope.incarnation)
        var refused: [RelayFrame] = []
        for frame in envelope.frames {
            switch frame {
            case .open(let id, let client):
                open(id, client: client, of: gateway)
            case .message(let id, let text):
                guard let channel = gateways[gateway.nodeID]?.channels[id] else {
                    refused.append(Self.unknownConnection(id))
                    continue
                }
                channel.loop.execute { channel.receive(text: text) }
            case .close(let id):
                guard let channel = gateways[gateway.nodeID]?.channels.removeValue(forKey: id) else { continue }
                metrics.hostedSessions.add(-1)
                channel.loop.execute { channel.finish(notifying: nil) }
            case .alive(let ids):
                refused += reconcile(gateway, listing: Set(ids))
                refused.append(.alive(connections: []))
            case .deliver, .closeConnection:
                fatalError("internal inconsistency in RelayHost: the decoder let a gateway-bound frame through")
            }
        }
        if !refused.isEmpty { publish(refused, to: gateway) }
    }

    private func open(_ id: UInt64, client: RelayedClient, of gateway: RelayNode) {
        guard gateways[gateway.nodeID]?.channels[id] == nil else { return }
        let index = nextLoop
        nextLoop = (nextLoop + 1) % registries.count
        let session = makeSession(registries[index])
        let channel = RelayChannel(connectionID: id, gateway: gateway, clientOrigin: Self.origin(of: client), session: session,
                                   outbox: outboxes[index]) { [weak self] channel in
            guard let host = self else { return }
            host.queue.async { host.forget(channel) }
        }
        gateways[gateway.nodeID]?.channels[id] = channel
        metrics.hostedSessions.add(1)
        channel.loop.execute { channel.open() }
    }

    /// A session that ended by itself (closed by the session) leaves the table.
    private func forget(_ channel: RelayChannel) {
        guard gateways[channel.gateway.nodeID]?.incarnation == channel.gateway.incarnation,
              gateways[channel.gateway.nodeID]?.channels[channel.connectionID] === channel else { return }
        gateways[channel.gateway.nodeID]?.channels[channel.connectionID] = nil
        metrics.hostedSessions.add(-1)
    }

    private func reconcile(_ gateway: RelayNode, listing ids: Set<UInt64>) -> [RelayFrame] {
        guard let known = gateways[gateway.nodeID] else { return [] }
        for (id, channel) in known.channels where !ids.contains(id) {
            gateways[gateway.nodeID]?.channels[id] = nil
            metrics.hostedSessions.add(-1)
            channel.loop.execute { channel.finish(notifying: nil) }
        }
        return ids.filter { known.channels[$0] == nil }.sorted().map(Self.unknownConnection)
    }

    private static func unknownConnection(_ id: UInt64) -> RelayFrame {
        .closeConnection(connection: id, code: CloseCode.serviceRestart.rawValue, reason: "session not found on the partition owner; reconnect")
    }

    /// The client as the gateway established it; a relayed path is never loopback here.
    static func origin(of client: RelayedClient) -> ClientOrigin {
        let address = IPAddress(client.address) ?? IPAddress(ipv4: 0)
        return ClientOrigin(address: address, source: .direct, isIdentified: client.isIdentified, isPathLocal: false,
                            usedTLS: client.usedTLS)
    }

    // MARK: Gateways that go away

    private func dropSilentGateways() {
        let cutoff = EventLoop.now - Int64(timings.gatewayTimeoutMilliseconds)
        for (name, gateway) in gateways where gateway.lastHeard < cutoff {
            if !gateway.channels.isEmpty {
                logger.info("relay_gateway_silent", ["gateway": name, "sessions_dropped": gateway.channels.count])
            }
            dropGateway(name, closingWith: nil)
        }
    }

    private func dropGateway(_ name: String, closingWith close: (CloseCode, String)?) {
        guard let gateway = gateways.removeValue(forKey: name) else { return }
        metrics.hostedSessions.add(-gateway.channels.count)
        for channel in gateway.channels.values {
            channel.loop.execute { channel.finish(notifying: close.map { (code: $0.0, reason: $0.1) }) }
        }
    }

    private func publish(_ frames: [RelayFrame], to gateway: RelayNode) {
        do {
            try connection.publish(gateway.gatewaySubject, payload: node.envelope(frames))
            metrics.envelopesOut.increment()
        } catch {
            metrics.publishFailures.increment()
            logger.warning("relay_publish_failed", ["subject": gateway.gatewaySubject, "error": "\(error)"])
        }
    }
}
