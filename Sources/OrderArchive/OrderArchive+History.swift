// The history queries the server's "my orders", earnings and order lookups need: a user's
// archived orders in one role, newest created first, paged by (created_at, id) exactly as the
// live boards page them, and a runner's totals per status. Every query runs on a pooled reader
// connection (`withReader`), never on the writer.
//
// Order ids and user ids are the server's decimal integers stored as text; ties in `created_at`
// are broken by the id's integer value, as the boards break them, so one cursor pages across
// live and archived orders.
import CSQLite

/// Whose orders a history query lists.
public enum ArchiveRole: Sendable, CaseIterable {
    /// Orders the user published.
    case publisher
    /// Orders the user ran (the order's final runner).
    case runner
    /// Group orders the user held a share of when the order was archived.
    case participant
}

/// Where `orders(of:as:before:limit:)` continues: the last order of the previous page, by its
/// creation time and integer id. The next page holds only orders created earlier, or at the same
/// time with a smaller id.
public struct CreationCursor: Sendable, Equatable {
    public var createdAt: Int64
    public var id: UInt64

    public init(createdAt: Int64, id: UInt64) {
        self.createdAt = createdAt
        self.id = id
    }
}

/// A runner's archived orders of one status: how many, what they earned on them, and the
/// publishers' ratings among them.
public struct ArchivedRunnerTotals: Sendable, Equatable {
    public var count = 0
    public var earned = 0
    public var ratingCount = 0
    public var ratingStars = 0

    public init(count: Int = 0, earned: Int = 0, ratingCount: Int = 0, ratingStars: Int = 0) {
        self.count = count
        self.earned = earned
        self.ratingCount = ratingCount
        self.ratingStars = ratingStars
    }
}

extension OrderArchive {
    /// The archived orders `user` has in `role`, newest created first (ties: larger id first),
    /// at most `limit`, only those after `cursor` when one is given.
    public func orders(of user: String, as role: ArchiveRole, before cursor: CreationCursor? = nil,
                       limit: Int) throws(ArchiveError) -> [ArchivedOrder] {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement(HistorySchema.orders(of: role, afterCursor: cursor != nil))
            defer { sqlite3_reset(statement.handle) }
            statement.bind(1, user)
            if let cursor {
                statement.bind(2, cursor.createdAt)
                statement.bind(3, Int64(clamping: cursor.id))
            }
            statement.bind(4, max(0, limit))
            var orders: [ArchivedOrder] = []
            while try statement.step() { orders.append(archivedOrder(from: statement)) }
            return orders
        }
    }

    /// `runner`'s archived orders grouped by status, leaving out the orders in `excluding` (ids
    /// the caller counts from elsewhere, such as orders still on a live board).
    public func runnerTotals(of runner: String, excluding: Set<String> = []) throws(ArchiveError) -> [String: ArchivedRunnerTotals] {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement(HistorySchema.runnerTotals)
            defer { sqlite3_reset(statement.handle) }
            statement.bind(1, runner)
            statement.bind(2, jsonArray(excluding))
            var totals: [String: ArchivedRunnerTotals] = [:]
            while try statement.step() {
                totals[statement.string(0)] = ArchivedRunnerTotals(count: statement.int(1), earned: statement.int(2),
                                                                   ratingCount: statement.int(3), ratingStars: statement.int(4))
            }
            return totals
        }
    }
}

/// Replaces the participants recorded for `order` by its current ones. Runs inside the writer's
/// batch transaction, only when the upsert stored this revision.
func storeParticipants(of order: ArchivedOrder, on connection: Connection) throws(ArchiveError) {
    let clear = try connection.statement(HistorySchema.clearParticipants)
    clear.bind(1, order.id)
    try clear.run()
    let insert = try connection.statement(HistorySchema.insertParticipant)
    for user in Set(order.participants) {
        insert.bind(1, user)
        insert.bind(2, order.id)
        insert.bind(3, order.createdAt)
        try insert.run()
    }
}

/// The ids as a JSON array of strings, for `json_each`.
private func jsonArray(_ ids: Set<String>) -> String {
    var text = "["
    for (index, id) in ids.sorted().enumerated() {
        if index > 0 { text += "," }
        text += "\""
        for scalar in id.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20: text += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                + String(scalar.value, radix: 16)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
    return text + "]"
}
