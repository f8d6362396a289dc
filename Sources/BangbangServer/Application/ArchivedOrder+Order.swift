// The one mapping between an `Order` and the archive's record of it, for the archiver that
// writes closed orders and the history queries that read them back. `encoded` is the order's
// stored form (`Order.storageEncoded()`, the journal's keyed binary bytes); the other fields are
// what the archive filters and sums on, with ids as decimal text.
import BangbangCore
import BangbangStorage
import OrderArchive

extension ArchivedOrder {
    init(_ order: Order) {
        self.init(id: String(order.id.rawValue), type: order.type.rawValue, campus: order.campus,
                  publisher: String(order.publisher.rawValue), runner: order.runner.map { String($0.rawValue) },
                  status: order.status.rawValue, tip: Int(order.tip), createdAt: order.createdAt.milliseconds,
                  closedAt: order.closedAt.milliseconds, revision: Int64(order.revision),
                  publisherRating: order.ratingByPublisher?.stars, runnerRating: order.ratingByRunner?.stars,
                  runnerEarning: Int(order.runnerEarning), participants: order.participants.map { String($0.rawValue) },
                  encoded: order.storageEncoded())
    }
}

extension Order {
    /// The order an archive record holds. A record whose bytes do not decode, or decode to
    /// another order, is corruption: `internal_error`, never a silently missing order.
    init(archived: ArchivedOrder) throws(DomainError) {
        do {
            self = try Order(storageEncoded: archived.encoded)
        } catch {
            throw DomainError(.internalError, "archived order \(archived.id) cannot be read")
        }
        guard String(id.rawValue) == archived.id else {
            throw DomainError(.internalError, "archived order \(archived.id) holds order \(id)")
        }
    }

    /// When the order reached its final status; its creation time while it has none.
    var closedAt: Timestamp {
        timeline.last { $0.status.isTerminal }?.at ?? createdAt
    }

    /// What the runner earned on it: the tip of a completed order, the fee of a late cancellation.
    var runnerEarning: Cents {
        switch status {
        case .completed: tip
        case .cancelled: cancellation?.fee ?? 0
        default: 0
        }
    }
}
