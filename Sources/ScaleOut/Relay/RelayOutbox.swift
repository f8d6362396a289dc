// What one loop's relayed sessions send to their gateways, gathered for one loop turn and
// published as one envelope per gateway (more only past `maxEnvelopeBytes`).
//
// A feed event that reaches N relayed runners of one gateway on this loop becomes one
// `deliver` frame naming the N connections (RelayBatch.swift), so it crosses NATS once and the
// gateway frames it once.
//
// Confinement: every method runs on `loop`'s queue; the publish happens there too.
import BangbangApplication
import NATSClient
import PartitionOwner
import RelayProtocol
import SocketServer
import WebSocketProtocol
import WebSocketServer

package final class RelayOutbox: @unchecked Sendable {
    let loop: EventLoop
    private let connection: NATSConnection
    private let owner: RelayNode
    private let maxEnvelopeBytes: Int
    private let metrics: RelayMetrics
    private let logger: Logger
    private var batches: [RelayNode: RelayBatch] = [:]
    private var isFlushScheduled = false

    init(loop: EventLoop, connection: NATSConnection, owner: RelayNode, maxEnvelopeBytes: Int, metrics: RelayMetrics, logger: Logger) {
        self.loop = loop
        self.connection = connection
        self.owner = owner
        self.maxEnvelopeBytes = maxEnvelopeBytes
        self.metrics = metrics
        self.logger = logger
    }

    func deliver(_ text: [UInt8], to id: UInt64, of gateway: RelayNode) {
        batches[gateway, default: RelayBatch()].deliver(text, to: id)
        scheduleFlush()
    }

    func deliver(_ message: SharedMessage, to id: UInt64, of gateway: RelayNode) {
        batches[gateway, default: RelayBatch()].deliver(message, to: id)
        scheduleFlush()
    }

    func closeConnection(_ id: UInt64, of gateway: RelayNode, code: CloseCode, reason: String) {
        batches[gateway, default: RelayBatch()].close(id, code: code, reason: reason)
        scheduleFlush()
    }

    private func scheduleFlush() {
        guard !isFlushScheduled else { return }
        isFlushScheduled = true
        // Runs after the block now on the loop (an outbox drain, a request): its sends join.
        loop.execute { self.flush() }
    }

    private func flush() {
        isFlushScheduled = false
        let pending = batches
        batches.removeAll(keepingCapacity: true)
        for (gateway, batch) in pending where !batch.isEmpty {
            publish(batch.frames, to: gateway)
        }
    }

    private func publish(_ frames: [RelayFrame], to gateway: RelayNode) {
        let subject = gateway.gatewaySubject
        var envelope: [UInt8] = []
        func send() {
            do {
                try connection.publish(subject, payload: envelope)
                metrics.envelopesOut.increment()
            } catch {
                metrics.publishFailures.increment()
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
