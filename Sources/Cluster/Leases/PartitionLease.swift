// The lease of one partition: key `p<n>` (or `a<n>`) of the leases bucket, written only by
// compare-and-set on its revision, through KeyValueBucket's bucket-wide fence: clustered
// nats-server 2.9 checks a per-key condition only against stored messages, so two writers racing
// from one revision could both win. Taking is `create` (key absent or deleted) or `update` from the
// revision seen expired; renewing is `update` from the holder's last revision; giving up is
// `delete` at it. A refused compare-and-set means somebody else wrote first: the holder has lost
// the lease.
import NATSClient

/// Why a lease write did not happen.
public enum LeaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another write to the key came first: the lease is (now) someone else's.
    case heldElsewhere(PartitionID)
    /// NATS did not answer as asked; the write may or may not have been stored.
    case unavailable(PartitionID, NATSClientError)

    public var description: String {
        switch self {
        case .heldElsewhere(let partition): "the lease of \(partition) is held by another node"
        case .unavailable(let partition, let error): "the lease of \(partition) could not be written: \(error)"
        }
    }
}

public struct PartitionLease: Sendable {
    public let partition: PartitionID
    public let node: String
    public let bucket: KeyValueBucket
    public let configuration: LeaseConfiguration

    /// The bucket of a deployment's leases.
    public static let bucketName = "bb-leases"

    /// Creates (or finds) the leases bucket: history 1, `replicas` copies (3 in a cluster).
    public static func makeBucket(in jetStream: JetStream, name: String = bucketName,
                                  replicas: Int = 3) async throws(NATSClientError) -> KeyValueBucket {
        try await KeyValueBucket.create(name, in: jetStream, configuration: .init(history: 1, replicas: replicas))
    }

    public init(partition: PartitionID, node: String, bucket: KeyValueBucket, configuration: LeaseConfiguration) {
        precondition(Self.isValidNodeID(node), "a node id is letters, digits, - and _")
        self.partition = partition
        self.node = node
        self.bucket = bucket
        self.configuration = configuration
    }

    public var key: String { partition.description }

    /// Letters, digits, `-` and `_`: a node id is also its heartbeat key.
    public static func isValidNodeID(_ node: String) -> Bool {
        !node.isEmpty && node.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// The value this node writes in `term` (0 when taking).
    public func value(term: UInt64, journalSequence: UInt64 = 0) -> [UInt8] {
        LeaseRecord(node: node, term: term, durationMilliseconds: configuration.durationMilliseconds,
                    journalSequence: journalSequence).encoded()
    }

    /// The key's last entry: its value (nil when deleted or never written) and revision (0: never).
    public func read() async throws(LeaseError) -> (value: [UInt8]?, revision: UInt64) {
        do {
            guard let entry = try await bucket.latest(key) else { return (nil, 0) }
            return (entry.operation == .put ? entry.value : nil, entry.revision)
        } catch {
            throw .unavailable(partition, error)
        }
    }

    /// Takes the lease if the key is absent or deleted.
    public func take() async throws(LeaseError) -> LeaseHolding {
        let startedAt = ContinuousClock.now
        let revision = try await written { () async throws(NATSClientError) in try await bucket.create(key, value(term: 0)) }
        return LeaseHolding(partition: partition, term: revision, revision: revision, renewedAt: startedAt)
    }

    /// Takes the lease over from the entry at `revision` (one seen expired).
    public func takeOver(from revision: UInt64) async throws(LeaseError) -> LeaseHolding {
        let startedAt = ContinuousClock.now
        let stored = try await written { () async throws(NATSClientError) in
            try await bucket.update(key, value(term: 0), revision: revision)
        }
        return LeaseHolding(partition: partition, term: stored, revision: stored, renewedAt: startedAt)
    }

    /// Renews a held lease; `.heldElsewhere` means it was lost.
    public func renew(_ holding: LeaseHolding, journalSequence: UInt64 = 0) async throws(LeaseError) -> LeaseHolding {
        precondition(holding.partition == partition, "a holding renews its own partition's lease")
        let startedAt = ContinuousClock.now
        let revision = try await written { () async throws(NATSClientError) in
            try await bucket.update(key, value(term: holding.term, journalSequence: journalSequence), revision: holding.revision)
        }
        return LeaseHolding(partition: partition, term: holding.term, revision: revision, renewedAt: startedAt)
    }

    /// Gives the lease up, only if it is still at the holding's revision.
    public func release(_ holding: LeaseHolding) async throws(LeaseError) {
        precondition(holding.partition == partition, "a holding releases its own partition's lease")
        _ = try await written { () async throws(NATSClientError) in try await bucket.delete(key, revision: holding.revision) }
    }

    private func written(_ write: () async throws(NATSClientError) -> UInt64) async throws(LeaseError) -> UInt64 {
        do {
            return try await write()
        } catch .jetStream(let error) where error.isWrongLastSequence {
            throw .heldElsewhere(partition)
        } catch {
            throw .unavailable(partition, error)
        }
    }
}
