// The relay's subjects and timings, and how either side reads what arrives, in one place.
import BangbangApplication
import PartitionOwner
import NATSClient
import RelayProtocol

extension RelayCodec {
    /// The envelope `message` carries, counted in. One that does not decode is counted refused,
    /// logged and dropped: a peer's malformed frame never ends anything here.
    static func received(_ message: NATSMessage, travelling direction: RelayDirection, metrics: RelayMetrics,
                         logger: Logger) -> RelayEnvelope? {
        metrics.envelopesIn.increment()
        do {
            return try decode(message.payload, travelling: direction)
        } catch {
            metrics.envelopesRefused.increment()
            logger.warning("relay_envelope_refused", ["subject": message.subject, "error": "\(error)"])
            return nil
        }
    }
}

/// How long either side of a relay waits for the other before giving up on it.
package struct RelayTimings: Sendable {
    /// How often a gateway tells each owner it relays for which connections it holds, and the
    /// owner answers: often enough that a lost frame is noticed within about a second.
    var aliveIntervalMilliseconds = 1_000
    /// An owner that has not heard from a gateway for this long drops its sessions: five
    /// missed beats, so a NATS reconnect (a few hundred milliseconds) never costs a session.
    var gatewayTimeoutMilliseconds = 5_000
    /// A gateway that has not heard from an owner for this long closes its relayed clients with
    /// 1012, so they reconnect (and resume) instead of waiting on a silent node.
    var ownerTimeoutMilliseconds = 5_000
    /// The largest envelope an owner publishes; more frames go out in further envelopes. Well
    /// under nats-server's default `max_payload` of 1 MiB.
    var maxEnvelopeBytes = 256 * 1024
}

/// Where a node is reached on NATS for the relay, and by which incarnation.
package struct RelayNode: Sendable, Hashable {
    let nodeID: String
    /// Drawn at process start: a restarted node has another, so what was meant for its
    /// predecessor never reaches it.
    let incarnation: UInt64

    /// The owner side listens here for its gateways' frames, while it owns the partition.
    package static func ownerSubject(_ nodeID: String) -> String { "bb.relay.\(nodeID)" }

    /// The gateway side listens here for what its owners send back; the incarnation is part
    /// of the subject, so an old incarnation's deliveries reach no connection of a new one.
    var gatewaySubject: String { "bb.gateway.\(nodeID).\(String(incarnation, radix: 16))" }

    static func gatewaySubject(_ nodeID: String, incarnation: UInt64) -> String {
        RelayNode(nodeID: nodeID, incarnation: incarnation).gatewaySubject
    }

    static func drawIncarnation() -> UInt64 { UInt64.random(in: 1...UInt64.max) }

    func envelope(_ frames: [RelayFrame]) -> [UInt8] {
        RelayCodec.encode(RelayEnvelope(sender: nodeID, incarnation: incarnation, frames: frames))
    }
}
