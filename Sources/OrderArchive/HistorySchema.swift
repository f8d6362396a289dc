/// The tables and queries of the history reads (OrderArchive+History.swift): indexes by
/// creation time per publisher and per runner, and the participants of group orders, one row
/// per share holder, so "orders I joined" is an index walk too.
enum HistorySchema {
    /// A version 1 file gains these when opened (`Schema.upgrade(from:)`); group orders a
    /// version 1 build archived get no participant rows, so they are missing from "orders I joined".
    static let create = """
        CREATE INDEX orders_by_publisher_created ON orders(publisher, created_at DESC);
        CREATE INDEX orders_by_runner_created ON orders(runner, created_at DESC);
        CREATE TABLE participants(
            user_id TEXT NOT NULL,
            order_id TEXT NOT NULL,
            order_created_at INTEGER NOT NULL,
            PRIMARY KEY(user_id, order_created_at, order_id)
        ) WITHOUT ROWID;
        CREATE INDEX participants_by_order ON participants(order_id);
        """

    static let clearParticipants = "DELETE FROM participants WHERE order_id = ?1"
    static let insertParticipant = "INSERT INTO participants(user_id, order_id, order_created_at) VALUES(?1, ?2, ?3)"

    /// Newest created first, ties by the id's integer value, larger first; ?1 the user, ?2 and
    /// ?3 the cursor's creation time and id, ?4 the limit.
    static func orders(of role: ArchiveRole, afterCursor: Bool) -> String {
        let (table, created, id, condition) = switch role {
        case .publisher: ("orders", "created_at", "id", "publisher = ?1")
        case .runner: ("orders", "created_at", "id", "runner = ?1")
        case .participant: ("participants JOIN orders ON orders.id = participants.order_id",
                            "participants.order_created_at", "participants.order_id", "participants.user_id = ?1")
        }
        let after = afterCursor ? "AND (\(created) < ?2 OR (\(created) = ?2 AND CAST(\(id) AS INTEGER) < ?3))" : ""
        return """
            SELECT \(Schema.selectColumns) FROM \(table) WHERE \(condition) \(after)
            ORDER BY \(created) DESC, CAST(\(id) AS INTEGER) DESC LIMIT ?4
            """
    }

    /// Per status: count, earnings, and the publishers' ratings; ?1 the runner, ?2 a JSON
    /// array of order ids to leave out.
    static let runnerTotals = """
        SELECT status, count(*), coalesce(sum(runner_earning), 0), count(publisher_rating),
               coalesce(sum(publisher_rating), 0)
        FROM orders WHERE runner = ?1 AND id NOT IN (SELECT value FROM json_each(?2))
        GROUP BY status
        """
}
