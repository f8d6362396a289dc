// What one loop's relayed sessions send to their gateways, gathered for one loop turn and
// published as one envelope per gateway (more only past `maxEnvelopeBytes`).
//
// A feed event that reaches N relayed runners of one gateway on this loop becomes one
// `deliver` frame naming the N connections, so it crosses NATS once and the gateway frames it
// once. Merging keeps each connection's order: a shared message joins an earlier `deliver` of
// the same message only when the connection has nothing queued after that frame; otherwise it
// starts a new frame at the end.
//
// Confinement: every method runs on `loop`'s queue; the publish happens there too.
import NATSClient
import RelayProtocol
import SocketServer
import WebSocketProtocol

final class RelayOutbox: @unchecked Sendable {
    let loop: EventLoop
    private let connection: NATSConnection
    private let owner: RelayNode
    private let maxEnvelopeBytes: Int
    private let logger: Logger
    private var batches: [RelayNode: Batch] = [:]
    private var isFlushScheduled = false

    private enum Pending {
        case text(UInt64, [UInt8])
        case shared(SharedMessage, [UInt64])
        case close(UInt64, CloseCode, String)
    }

    private struct Batch {
        var frames: [Pending] = []
        /// The last frame each connection appears in.
        var lastFrame: [UInt64: Int] = [:]
        /// The latest `deliver` frame of each shared message.
        var sharedFrame: [ObjectIdentifier: Int] = [:]
    }

    init(loop: EventLoop, connection: NATSConnection, owner: RelayNode, maxEnvelopeBytes: Int, logger: Logger) {
        self.loop = loop
        self.connection = connection
        self.owner = owner
        self.maxEnvelopeBytes = maxEnvelopeBytes
        self.logger = logger
    }

    func deliver(_ text: [UInt8], to id: UInt64, of gateway: RelayNode) {
        append(.text(id, text), for: id, to: gateway)
    }

    func deliver(_ message: SharedMessage, to id: UInt64, of gateway: RelayNode) {
        let key = ObjectIdentifier(message)
        var batch = batches[gateway] ?? Batch()
        if let index = batch.sharedFrame[key], (batch.lastFrame[id] ?? -1) < index,
           case .shared(let shared, var ids) = batch.frames[index], ids.count < RelayCodec.maxDeliverRecipients {
            ids.append(id)
            batch.frames[index] = .shared(shared, ids)
            batch.lastFrame[id] = index
            batches[gateway] = batch
            return
        }
        batch.sharedFrame[key] = batch.frames.count
        batches[gateway] = batch
        append(.shared(message, [id]), for: id, to: gateway)
    }

    func closeConnection(_ id: UInt64, of gateway: RelayNode, code: CloseCode, reason: String) {
        append(.close(id, code, reason), for: id, to: gateway)
    }

    private func append(_ pending: Pending, for id: UInt64, to gateway: RelayNode) {
        batches[gateway, default: Batch()].lastFrame[id] = batches[gateway, default: Batch()].frames.count
        batches[gateway, default: Batch()].frames.append(pending)
        guard !isFlushScheduled else { return }
        isFlushScheduled = true
        // Runs after the block now on the loop (an outbox drain, a request): its sends join.
        loop.execute { self.flush() }
    }

    private func flush() {
        isFlushScheduled = false
        let pending = batches
        batches.removeAll(keepingCapacity: true)
        for (gateway, batch) in pending {
            publish(batch.frames.map(Self.frame), to: gateway)
        }
    }

    private static func frame(_ pending: Pending) -> RelayFrame {
        switch pending {
        case .text(let id, let text): .deliver(connections: [id], text: text)
        case .shared(let message, let ids): .deliver(connections: ids, text: message.payload)
        case .close(let id, let code, let reason): .closeConnection(connection: id, code: code.rawValue, reason: reason)
        }
    }

    private func publish(_ frames: [RelayFrame], to gateway: RelayNode) {
        let subject = gateway.gatewaySubject
        var envelope: [UInt8] = []
        func send() {
            do { try connection.publish(subject, payload: envelope) } catch {
                logger.warning("relay_publish_failed", ["subject": subject, "bytes": envelope.count, "error": "\(error)"])
            }
            envelope.removeAll(keepingCapacity: true)
        }
        for frame in frames {
            if !envelope.isEmpty, envelope.count + RelayCodec.size(of: frame) > maxEnvelopeBytes { send() }
            if envelope.isEmpty { RelayCodec.startEnvelope(sender: owner.nodeID, incarnation: owner.incarnation, into: &envelope) }
            RelayCodec.append(frame, to: &envelope)
        }
        if !envelope.isEmpty { send() }
    }
}
