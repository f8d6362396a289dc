// The shared history of a cluster: the stream `BB_H0` (R3) of closed orders. The owner's archiver
// publishes each batch it is about to store, and waits for a quorum's acknowledgement, before
// storing it in its own archive and letting the shards move the orders out of memory
// (`Archiver.beforeStoring`). Every node, the owner and the standbys, follows the stream into its
// own archive (`HistoryFollower`), so the node that owns the partition next answers history from an
// archive that holds everything any owner moved out of memory, and a standby's archive is already
// current when it takes over. The stream is never purged: it is the history; a node that starts
// with an empty archive fills it from the stream.
import BangbangApplication
import BangbangCore
import BangbangStorage
import Cluster
import Dispatch
import NATSClient
import OrderArchive
import PartitionOwner
import Synchronization

package struct HistoryStream: Sendable {
    static let streamName = "BB_H0"
    package static let subject = "bb.history.p0"
    /// Bound on waiting for one message's acknowledgement (the request's own timeout, 5 s, comes
    /// first); a batch not acknowledged stays in memory and is tried again by the archiver.
    static let publishTimeout: DispatchTimeInterval = .seconds(10)

    let jetStream: JetStream

    /// Finds the stream, or makes it with `replicas` copies.
    static func open(in jetStream: JetStream, replicas: Int) async throws(NATSClientError) -> HistoryStream {
        _ = try await jetStream.ensureStream(.durableLog(name: streamName, subject: subject, replicas: replicas))
        return HistoryStream(jetStream: jetStream)
    }

    package struct Unacknowledged: Error, CustomStringConvertible {
        package let description: String
    }

    /// Publishes the records' orders and returns once every message is acknowledged. Blocks the
    /// calling thread: the archiver's queue, which waits for nothing else.
    func publishBlocking(_ records: [ArchivedOrder]) throws {
        for message in HistoryBatch.encode(records.map(\.encoded)) {
            let done = DispatchSemaphore(value: 0)
            let outcome = Mutex<Result<PublishAck, NATSClientError>?>(nil)
            try jetStream.startPublish(Self.subject, payload: message) { result in
                outcome.withLock { $0 = result }
                done.signal()
            }
            guard done.wait(timeout: .now() + Self.publishTimeout) == .success else {
                throw Unacknowledged(description: "the history stream did not acknowledge a batch in 10 s")
            }
            if case .failure(let error)? = outcome.withLock({ $0 }) {
                throw Unacknowledged(description: "the history stream refused a batch: \(error)")
            }
        }
    }
}

extension HistoryStream {
    /// Publishes every order `archive` holds, 512 at a time, each message acknowledged before the
    /// next; returns how many. A single node's history, carried into the cluster it joins.
    func publishAll(of archive: OrderArchive) async throws -> Int {
        var after: String?
        var count = 0
        while true {
            let page = try archive.orders(after: after, limit: Archiver.batchLimit)
            guard let last = page.last else { return count }
            for message in HistoryBatch.encode(page.map(\.encoded)) {
                _ = try await jetStream.publish(Self.subject, payload: message)
            }
            count += page.count
            after = last.id
        }
    }
}

/// Follows the history stream into this node's archive: every second, whatever the stream holds
/// past the archive's followed position, each message stored with its position in one
/// transaction, so a restart goes on where the last one stopped. Storing is idempotent (an order
/// is replaced only by a newer revision), so the owner's own batches, stored once already, and a
/// message read twice change nothing.
package final class HistoryFollower: Sendable {
    static let interval: Duration = .seconds(1)
    /// Messages asked for at once: up to about 4 MiB of orders in memory.
    static let window: UInt64 = 16

    let stream: HistoryStream
    let archive: OrderArchive
    private let logger: Logger
    private let loop = Mutex<Task<Void, Never>?>(nil)

    init(stream: HistoryStream, archive: OrderArchive, logger: Logger) {
        self.stream = stream
        self.archive = archive
        self.logger = logger
    }

    package func start() {
        let task = Task { [weak self] in
            var failing = false
            while !Task.isCancelled, let self {
                do {
                    try await catchUp()
                    if failing { logger.info("history_follow_recovered") }
                    failing = false
                } catch {
                    if !failing { logger.warning("history_follow_failed", ["detail": "\(error)", "retry_ms": 1000]) }
                    failing = true
                }
                try? await Task.sleep(for: Self.interval)
            }
        }
        loop.withLock { $0 = task }
    }

    func stop() {
        loop.withLock { $0 }?.cancel()
    }

    /// Stores everything the stream holds now; returns the position reached.
    @discardableResult
    func catchUp() async throws -> UInt64 {
        let last = try await stream.jetStream.streamInfo(HistoryStream.streamName).lastSequence
        var position = try archive.followedPosition()
        while position < last {
            let window = (position + 1)...min(last, position + Self.window)
            for message in try await stream.jetStream.messages(in: HistoryStream.streamName, sequences: window) {
                try archive.archive(records(in: message), throughSequence: 0, followedThrough: message.sequence)
            }
            position = window.upperBound
        }
        return position
    }

    /// The archive records a message holds. One that cannot be read is logged and passed over:
    /// stopping at it would hold back all the history after it.
    private func records(in message: StoredMessage) -> [ArchivedOrder] {
        do {
            return try HistoryBatch.decode(message.payload).map { ArchivedOrder(try StoredOrder.decode($0)) }
        } catch {
            logger.error("history_message_unreadable", ["sequence": message.sequence, "detail": "\(error)"])
            return []
        }
    }
}
