// The owner's side of routing: for each partition this node owns, the requests other nodes route to
// it on `bb.req.<partition>` (PartitionRequests, queue group `owners`), each run here as the
// operation it names (RoutedOperations.swift) and answered with its reply message. Requests are
// read on one serial queue, in the order they arrive, and hop from there to the owners' queues as a
// connection's requests do.
import BangbangApplication
import Cluster
import Dispatch
import NATSClient
import Synchronization

package final class OwnerRequests: Sendable {
    package let requests: PartitionRequests
    let app: Application
    let map: PartitionMap
    private let queue = DispatchQueue(label: "bangbang.routed", qos: .userInitiated)
    private let subscriptions = Mutex<[PartitionID: NATSSubscription]>([:])

    package init(requests: PartitionRequests, app: Application, map: PartitionMap) {
        self.requests = requests
        self.app = app
        self.map = map
    }

    /// Starts answering `partition`'s requests; nothing if already answering them.
    package func serve(_ partition: PartitionID) throws(NATSClientError) {
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

    /// Runs a request of a session on this node for `partition` as if it had come over NATS, on
    /// the same queue, in the process: false (and nothing run) once `partition` is no longer
    /// served here, and the caller sends it over NATS to whoever owns it now.
    func answerHere(_ partition: PartitionID, payload: [UInt8], answer: @escaping @Sendable ([UInt8]) -> Void) -> Bool {
        guard subscriptions.withLock({ $0[partition] != nil }) else { return false }
        let (app, map, counter) = (app, map, app.metrics.relay.routedRequests)
        queue.async {
            counter.increment(label: partition.description)
            RoutedOperations.run(payload, serving: partition, of: map, app: app, answer: answer)
        }
        return true
    }

    /// Stops answering `partition`'s requests (it was handed over or lost); requests already
    /// read are still answered.
    func stopServing(_ partition: PartitionID) {
        subscriptions.withLock { $0.removeValue(forKey: partition) }?.unsubscribe()
    }

    package func stopAll() {
        for subscription in subscriptions.withLock({ table in defer { table = [:] }; return Array(table.values) }) {
            subscription.unsubscribe()
        }
    }
}
