// One subscription: what it listens to and where its messages go.
import Dispatch
import Synchronization

final class Subscription: @unchecked Sendable {
    // Confinement: `id`, `subject`, `queueGroup`, `queue` and `handler` never change; `batch` is
    // touched only on the connection's loop; `isCancelled` is atomic.
    let id: UInt64
    let subject: String
    let queueGroup: String?
    /// Nil: delivered on the connection's loop as it is parsed.
    let queue: DispatchQueue?
    private let handler: @Sendable (NATSMessage) -> Void
    var batch: [NATSMessage] = []
    let isCancelled = Atomic(false)

    init(id: UInt64, subject: String, queueGroup: String?, queue: DispatchQueue?, handler: @escaping @Sendable (NATSMessage) -> Void) {
        self.id = id
        self.subject = subject
        self.queueGroup = queueGroup
        self.queue = queue
        self.handler = handler
    }

    /// Calls the handler unless the subscription ended meanwhile (messages already in flight
    /// when `unsubscribe` is called are dropped, not delivered late).
    func deliver(_ message: NATSMessage) {
        guard !isCancelled.load(ordering: .relaxed) else { return }
        handler(message)
    }
}

/// A subscription as its owner sees it.
public struct NATSSubscription: Sendable {
    public let id: UInt64
    public let subject: String
    private let connection: NATSConnection

    init(id: UInt64, subject: String, connection: NATSConnection) {
        self.id = id
        self.subject = subject
        self.connection = connection
    }

    /// Ends the subscription; messages not yet delivered are dropped. Idempotent.
    public func unsubscribe() {
        connection.unsubscribe(id)
    }
}
