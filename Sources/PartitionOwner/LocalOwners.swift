// The partitions a node owns, for the sessions on that node: a request whose partition is served in
// this process is run here, on the owner's queue for routed requests, rather than sent over NATS to
// come back to the same process. Only while the owner serves the partition: a pair being handed
// back or stopped is taken out first, and a request its owner no longer takes goes over NATS to
// whoever owns it now.
import BangbangApplication
import Cluster
import Synchronization

package final class LocalOwners: Sendable {
    private let owners = Mutex<[PartitionID: OwnerRequests]>([:])

    package func add(_ owner: OwnerRequests, for partitions: [PartitionID]) {
        owners.withLock { table in for partition in partitions { table[partition] = owner } }
    }

    package func remove(_ partitions: [PartitionID]) {
        owners.withLock { table in for partition in partitions { table[partition] = nil } }
    }

    /// Runs `payload` here when `partition` is served in this process; false otherwise.
    package func answer(_ partition: PartitionID, payload: [UInt8], answer: @escaping @Sendable ([UInt8]) -> Void) -> Bool {
        guard let owner = owners.withLock({ $0[partition] }) else { return false }
        return owner.answerHere(partition, payload: payload, answer: answer)
    }

    package init() {}
}
