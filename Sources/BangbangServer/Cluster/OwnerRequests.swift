// The owner's side of routing (docs/scale-out.md, section 7): for each partition this node owns,
// the requests other nodes route to it on `bb.req.<partition>` (PartitionRequests, queue group
// `owners`), each run here as the operation it names (RoutedOperations.swift) and answered with
// its reply message. Requests are read on one serial queue, in the order they arrive, and hop
// from there to the owners' queues as a connection's requests do.
import Cluster
import Dispatch
import NATSClient
import Synchronization

final class OwnerRequests: Sendable {
    let requests: PartitionRequests
    let app: Application
    let map: PartitionMap
    private let queue = DispatchQueue(label: "bangbang.routed", qos: .userInitiated)
    private let subscriptions = Mutex<[PartitionID: NATSSubscription]>([:])

    init(requests: PartitionRequests, app: Application, map: PartitionMap) {
        self.requests = requests
        self.app = app
        self.map = map
    }

    /// Starts answering `partition`'s requests; nothing if already answering them.
    func serve(_ partition: PartitionID) throws(NATSClientError) {
        let (app, requests, queue, map) = (app, requests, queue, map)
        let (counter, label) = (app.metrics.relay.routedRequests, partition.description)
        try subscriptions.withLock { (table) throws(NATSClientError) in
            guard table[partition] == nil else { return }
            table[partition] = try requests.serve(partition, deliveringOn: queue) { payload, responder in
                counter.increment(label: label)
                RoutedOperations.run(Array(payload), serving: partition, of: map, app: app) { reply in
                    responder.answer(reply)
                }
            }
        }
    }

    /// Stops answering `partition`'s requests (it was handed over or lost); requests already
    /// read are still answered.
    func stopServing(_ partition: PartitionID) {
        subscriptions.withLock { $0.removeValue(forKey: partition) }?.unsubscribe()
    }

    func stopAll() {
        for subscription in subscriptions.withLock({ table in defer { table = [:] }; return Array(table.values) }) {
            subscription.unsubscribe()
        }
    }
}
