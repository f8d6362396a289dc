// ConnectionCore's routing of what arrives: a message to its subscription (gathered per read for
// a subscription with a delivery queue) and a reply to the request awaiting it.
import Dispatch
import NATSProtocol
import Synchronization

extension ConnectionCore {
    // MARK: Routing (loop)

    func route(_ view: MessageView) {
        if view.subscriptionID == inboxSubscriptionID {
            routeReply(view)
            return
        }
        guard let subscription = shared.withLock({ $0.subscriptions[view.subscriptionID] }) else { return }
        let message = NATSMessage(view)
        guard subscription.queue != nil else {
            subscription.deliver(message)
            return
        }
        if subscription.batch.isEmpty { batchedSubscriptions.append(subscription) }
        subscription.batch.append(message)
    }

    func deliverBatches() {
        guard !batchedSubscriptions.isEmpty else { return }
        for subscription in batchedSubscriptions {
            let messages = subscription.batch
            subscription.batch = []
            subscription.queue!.async {
                for message in messages { subscription.deliver(message) }
            }
        }
        batchedSubscriptions.removeAll(keepingCapacity: true)
    }

    private func routeReply(_ view: MessageView) {
        guard let token = InboxName.token(of: view.subject, prefixLength: inboxPrefix.utf8.count) else { return }
        guard let entry = shared.withLock({ $0.inboxEntries.removeValue(forKey: token) }) else { return }
        let message = NATSMessage(view)
        entry.resolve(message.status == 503 ? .failure(.noResponders(subject: "")) : .success(message))
    }
}
