/// The archive file's identity and tables. `application_id` marks the file as ours ("BBAR"), so
/// open refuses any other SQLite database instead of adding tables to it; `user_version` is the
/// schema version, so an older build refuses a file a newer one wrote.
enum Schema {
    static let applicationID: Int32 = 0x4242_4152
    static let version: Int32 = 4

    static let create = """
        CREATE TABLE orders(
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL,
            campus TEXT NOT NULL,
            publisher TEXT NOT NULL,
            runner TEXT,
            status TEXT NOT NULL,
            tip INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            closed_at INTEGER NOT NULL,
            revision INTEGER NOT NULL,
            publisher_rating INTEGER,
            runner_rating INTEGER,
            runner_earning INTEGER NOT NULL,
            encoded BLOB NOT NULL
        );
        CREATE TABLE watermark(id INTEGER PRIMARY KEY CHECK(id = 1), sequence INTEGER NOT NULL);
        \(createFollowed)
        \(HistorySchema.create)
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = \(version);
        """

    static let columns = """
        id, type, campus, publisher, runner, status, tip, created_at, closed_at, revision,
        publisher_rating, runner_rating, runner_earning, encoded
        """

    /// Inserts an order, or replaces the stored one only when this revision is newer, so
    /// archiving the same batch twice changes nothing and an old revision never wins.
    static let upsert = """
        INSERT INTO orders(\(columns)) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
        ON CONFLICT(id) DO UPDATE SET
            type = excluded.type, campus = excluded.campus, publisher = excluded.publisher,
            runner = excluded.runner, status = excluded.status, tip = excluded.tip,
            created_at = excluded.created_at, closed_at = excluded.closed_at,
            revision = excluded.revision, publisher_rating = excluded.publisher_rating,
            runner_rating = excluded.runner_rating, runner_earning = excluded.runner_earning,
            encoded = excluded.encoded
        WHERE excluded.revision > orders.revision
        """

    /// How far the archive has followed a shared stream of archived batches (a cluster's history
    /// stream), apart from the journal watermark: the two count different things.
    static let createFollowed = "CREATE TABLE followed(id INTEGER PRIMARY KEY CHECK(id = 1), sequence INTEGER NOT NULL);"

    static let advanceFollowed = """
        INSERT INTO followed(id, sequence) VALUES(1, ?1)
        ON CONFLICT(id) DO UPDATE SET sequence = max(sequence, excluded.sequence)
        """

    static let advanceWatermark = """
        INSERT INTO watermark(id, sequence) VALUES(1, ?1)
        ON CONFLICT(id) DO UPDATE SET sequence = max(sequence, excluded.sequence)
        """

    /// `columns`, then the order's participants joined by `participantSeparator`.
    static let selectColumns = """
        \(columns), (SELECT group_concat(p.user_id, char(31)) FROM participants AS p WHERE p.order_id = orders.id)
        """
    static let participantSeparator: Character = "\u{1F}"

    static let order = "SELECT \(selectColumns) FROM orders WHERE id = ?1"

    /// What brings a file of `version` to `Schema.version`, run in one transaction: version 1
    /// gains the history tables (HistorySchema.swift); versions 1 and 2 lose the indexes by
    /// closing time, which only a query by closing time (removed in version 3) walked; versions 1
    /// to 3 gain the followed position.
    static func upgrade(from version: Int32) -> String? {
        switch version {
        case 1: "\(HistorySchema.create) \(dropClosingTimeIndexes) \(createFollowed) \(setVersion)"
        case 2: "\(dropClosingTimeIndexes) \(createFollowed) \(setVersion)"
        case 3: "\(createFollowed) \(setVersion)"
        default: nil
        }
    }

    private static let dropClosingTimeIndexes = """
        DROP INDEX IF EXISTS orders_by_publisher;
        DROP INDEX IF EXISTS orders_by_runner;
        """

    private static let setVersion = "PRAGMA user_version = \(version);"
}
