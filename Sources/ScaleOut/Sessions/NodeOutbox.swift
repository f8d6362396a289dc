// What other queues hand to one event loop for the node sessions on it (NodeSession.swift): the
// routed replies, the followed personal events and board changes, closes. As with a server's
// `LoopRegistry`, items are queued under a lock and the loop drains them once per turn, in the
// order they were posted, so a personal event or a feed change costs one entry in an array, not
// a closure per recipient, and what one queue posted for a connection reaches it in that order.
import BangbangApplication
import Dispatch
import PartitionOwner
import SocketServer
import Synchronization
import WebSocketProtocol
import WebSocketServer

package final class NodeOutbox: @unchecked Sendable {
    // Confinement: `draining` is touched only on `loop`; `pending` is the lock-held handover.

    package enum Item: Sendable {
        /// A message made for this connection alone.
        case text([UInt8])
        /// The reply to a request of the client's in flight.
        case reply([UInt8], NodeSession.Pending)
        /// A message shared by every recipient (a board change's, or a personal event's).
        case shared(SharedMessage)
        /// A personal event, and what it changes of the login.
        case personal(SharedMessage, AccountChange?)
        /// A routed request's outcome, for the session to finish.
        case routed(NodeSession.Pending, NodeRouter.Outcome)
        case close(CloseCode, reason: String)
    }

    let loop: EventLoop
    private let pending = Mutex<(items: [(NodeSession, Item)], isDrainScheduled: Bool)>(([], false))
    /// The drained batch, kept for its capacity.
    private var draining: [(NodeSession, Item)] = []

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Queues `item` for `session` (any thread).
    func post(_ item: Item, to session: NodeSession) {
        let needsDrain = pending.withLock { pending -> Bool in
            pending.items.append((session, item))
            guard !pending.isDrainScheduled else { return false }
            pending.isDrainScheduled = true
            return true
        }
        if needsDrain { loop.execute { self.drain() } }
    }

    /// Queues a board change's messages for the sessions here that see it (any thread): one lock
    /// for all of them.
    func post(_ messages: [(NodeSession, SharedMessage)]) {
        let needsDrain = pending.withLock { pending -> Bool in
            for (session, message) in messages { pending.items.append((session, .shared(message))) }
            guard !pending.isDrainScheduled else { return false }
            pending.isDrainScheduled = true
            return true
        }
        if needsDrain { loop.execute { self.drain() } }
    }

    private func drain() {
        pending.withLock { pending in
            pending.isDrainScheduled = false
            swap(&pending.items, &draining)
        }
        for (session, item) in draining { session.perform(item) }
        draining.removeAll(keepingCapacity: draining.capacity <= 256)
    }
}
