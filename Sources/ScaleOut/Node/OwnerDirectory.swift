// What the gateway needs to know about ownership: this node's name and who owns the partition
// now, with a call on every change. ClusterNode implements it from the lease key's watch.
import BangbangApplication
import PartitionOwner

/// Who owns the cluster's partition, as this node sees it.
package protocol OwnerDirectory: AnyObject, Sendable {
    var localNodeID: String { get }
    /// The node that owns the partition now, or nil while nobody does (failover).
    var currentOwner: String? { get }
    /// Called (on any thread) whenever `currentOwner` changes; registered before start.
    func onOwnerChange(_ handler: @escaping @Sendable (String?) -> Void)
}
