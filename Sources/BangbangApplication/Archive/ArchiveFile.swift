// The order archive's file in the data directory, and the mapping from a closed `Order` to the
// record the archive stores (OrderArchive keeps the order's bytes opaque, plus the columns
// history queries filter and sum on). Opening refuses a file that is not ours, with a message
// that tells the operator what to do; the server never starts without the history it holds.
import BangbangCore
import BangbangStorage
import OrderArchive

extension Application {
    /// `archive.sqlite` in the data directory (README, "The order archive").
    package static let archiveFileName = "archive.sqlite"

    package static func openArchive(in dataDirectory: String,
                            faultInjection: OrderArchive.FaultInjection? = nil) throws(ConfigurationError) -> OrderArchive {
        let path = dataDirectory + "/" + archiveFileName
        do {
            return try OrderArchive(path: path, faultInjection: faultInjection)
        } catch {
            let reason: String
            switch error {
            case .notADatabase:
                reason = "it is not an SQLite database"
            case .foreignDatabase(let applicationID):
                reason = "it is another application's SQLite database (application_id \(applicationID))"
            case .newerSchema(let version):
                reason = "it was written by a newer server (archive schema \(version)); run that version or newer"
            case .corrupt(let detail):
                reason = "it is damaged (\(detail))"
            case .storageUnavailable(let detail), .sqlite(_, let detail):
                reason = "it cannot be read (\(detail))"
            }
            throw ConfigurationError("the order archive \(path) cannot be opened: \(reason). It was left untouched. "
                                     + "Restore it from a backup, or move it out of the data directory if the history in it "
                                     + "is not needed; the server does not start without it")
        }
    }
}

extension ArchivedOrder {
    /// The archive's record of a closed order.
    package init(_ order: Order) {
        let earning: Int
        switch order.status {
        case .completed where order.runner != nil: earning = Int(order.tip)
        case .cancelled: earning = Int(order.cancellation?.fee ?? 0)
        default: earning = 0
        }
        self.init(id: String(order.id.rawValue), type: order.type.rawValue, campus: order.campus,
                  publisher: String(order.publisher.rawValue), runner: order.runner.map { String($0.rawValue) },
                  status: order.status.rawValue, tip: Int(order.tip), createdAt: order.createdAt.milliseconds,
                  closedAt: (order.closedAt ?? order.createdAt).milliseconds, revision: Int64(order.revision),
                  publisherRating: order.ratingByPublisher?.stars, runnerRating: order.ratingByRunner?.stars,
                  runnerEarning: earning, participants: order.participants.map { String($0.rawValue) },
                  encoded: StoredOrder.encoded(order))
    }
}
