// The order archive: closed orders in one SQLite file (WAL mode), written in batched
// transactions by one archiver and read by history queries on their own connections.
//
// One writer connection behind a mutex keeps every transaction serial without SQLite's busy
// retries; reader connections come from a small pool, so a slow history query never waits for
// a batch and never touches the writer. The archive records a watermark, the last journal
// sequence whose closed orders it holds, in the same transaction as the orders, so after a crash
// the journal from the watermark on is exactly what has to be archived again.
import CSQLite
import Synchronization

public final class OrderArchive: Sendable {
    public typealias FaultInjection = @Sendable (ArchiveFaultPoint) throws(ArchiveError) -> Void

    public let path: String
    private let writer: Mutex<Connection>
    private let readers = Mutex<[Connection]>([])
    private let faultInjection: FaultInjection?

    /// Idle reader connections kept open; more are opened while queries overlap.
    static let pooledReaders = 4

    /// Opens the archive at `path`, creating it when the file is missing or empty. Any other
    /// file is checked before anything is written to it: a file that is not SQLite, another
    /// application's database or a newer schema is refused and left as it was.
    public init(path: String, faultInjection: FaultInjection? = nil) throws(ArchiveError) {
        let connection = try Connection(path: path, readOnly: false)
        let applicationID = Int32(truncatingIfNeeded: try connection.integer("PRAGMA application_id"))
        let version = Int32(truncatingIfNeeded: try connection.integer("PRAGMA user_version"))
        let pages = try connection.integer("PRAGMA page_count")
        if pages == 0 {
            try connection.execute("BEGIN IMMEDIATE; \(Schema.create) COMMIT;")
        } else {
            guard applicationID == Schema.applicationID else { throw .foreignDatabase(applicationID: applicationID) }
            guard version <= Schema.version else { throw .newerSchema(version: version) }
            if version != Schema.version {
                guard let upgrade = Schema.upgrade(from: version) else { throw .corrupt("schema version \(version)") }
                try connection.execute("BEGIN IMMEDIATE; \(upgrade) COMMIT;")
            }
        }
        try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
        self.path = path
        self.writer = Mutex(connection)
        self.faultInjection = faultInjection
    }

    /// Stores `batch` and raises the watermark to `throughSequence` (and the followed position to
    /// `followedThrough`, when given) in one transaction. Each order replaces the stored one only
    /// if its revision is newer; neither mark ever goes back. On any failure nothing of the batch
    /// is stored.
    public func archive(_ batch: [ArchivedOrder], throughSequence: UInt64,
                        followedThrough: UInt64? = nil) throws(ArchiveError) {
        try writer.withLock { (connection: inout Connection) throws(ArchiveError) in
            try faultInjection?(.beforeBegin)
            try connection.execute("BEGIN IMMEDIATE")
            do throws(ArchiveError) {
                let upsert = try connection.statement(Schema.upsert)
                for order in batch {
                    bind(order, to: upsert)
                    try upsert.run()
                    if sqlite3_changes(connection.handle) > 0 { try storeParticipants(of: order, on: connection) }
                    try faultInjection?(.afterInsert)
                }
                let watermark = try connection.statement(Schema.advanceWatermark)
                watermark.bind(1, Int64(clamping: throughSequence))
                try watermark.run()
                if let followedThrough {
                    let followed = try connection.statement(Schema.advanceFollowed)
                    followed.bind(1, Int64(clamping: followedThrough))
                    try followed.run()
                }
                try faultInjection?(.beforeCommit)
                try connection.execute("COMMIT")
            } catch {
                // SQLite may already have rolled back after a full disk or an I/O error.
                if connection.inTransaction { try? connection.execute("ROLLBACK") }
                throw error
            }
            try faultInjection?(.afterCommit)
        }
    }

    /// The last journal sequence the archive holds; 0 for a new archive.
    public func watermark() throws(ArchiveError) -> UInt64 {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement("SELECT sequence FROM watermark WHERE id = 1")
            defer { sqlite3_reset(statement.handle) }
            return try statement.step() ? UInt64(clamping: statement.int64(0)) : 0
        }
    }

    /// Up to `limit` orders with ids after `id` (all of them from nil), by id: for copying the
    /// whole archive elsewhere, a page at a time.
    public func orders(after id: String?, limit: Int) throws(ArchiveError) -> [ArchivedOrder] {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement("SELECT \(Schema.selectColumns) FROM orders WHERE id > ?1 ORDER BY id LIMIT ?2")
            defer { sqlite3_reset(statement.handle) }
            statement.bind(1, id ?? "")
            statement.bind(2, Int64(limit))
            var orders: [ArchivedOrder] = []
            while try statement.step() { orders.append(archivedOrder(from: statement)) }
            return orders
        }
    }

    /// The last message of the followed stream whose batch the archive holds; 0 if none.
    public func followedPosition() throws(ArchiveError) -> UInt64 {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement("SELECT sequence FROM followed WHERE id = 1")
            defer { sqlite3_reset(statement.handle) }
            return try statement.step() ? UInt64(clamping: statement.int64(0)) : 0
        }
    }

    public func order(id: String) throws(ArchiveError) -> ArchivedOrder? {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement(Schema.order)
            defer { sqlite3_reset(statement.handle) }
            statement.bind(1, id)
            return try statement.step() ? archivedOrder(from: statement) : nil
        }
    }

    /// Runs `body` on a reader connection taken from the pool, returning it afterwards.
    func withReader<Result>(_ body: (Connection) throws(ArchiveError) -> Result) throws(ArchiveError) -> Result {
        let pooled = readers.withLock { $0.popLast() }
        let connection: Connection
        if let pooled { connection = pooled } else { connection = try Connection(path: path, readOnly: true) }
        defer {
            readers.withLock { pool in
                if pool.count < Self.pooledReaders { pool.append(connection) }
            }
        }
        return try body(connection)
    }

    /// Lets a test make the disk look full: the writer cannot grow the file beyond `pages`.
    func limitWriterPageCount(to pages: Int) throws(ArchiveError) {
        try writer.withLock { (connection: inout Connection) throws(ArchiveError) in
            _ = try connection.integer("PRAGMA max_page_count = \(pages)")
        }
    }

    func writerPageCount() throws(ArchiveError) -> Int {
        try writer.withLock { (connection: inout Connection) throws(ArchiveError) in
            Int(try connection.integer("PRAGMA page_count"))
        }
    }
}

private func bind(_ order: ArchivedOrder, to statement: Statement) {
    statement.bind(1, order.id)
    statement.bind(2, order.type)
    statement.bind(3, order.campus)
    statement.bind(4, order.publisher)
    statement.bind(5, order.runner)
    statement.bind(6, order.status)
    statement.bind(7, order.tip)
    statement.bind(8, order.createdAt)
    statement.bind(9, order.closedAt)
    statement.bind(10, order.revision)
    statement.bind(11, order.publisherRating)
    statement.bind(12, order.runnerRating)
    statement.bind(13, order.runnerEarning)
    statement.bind(14, order.encoded)
}

/// An order row as `Schema.selectColumns` lists it.
func archivedOrder(from statement: Statement) -> ArchivedOrder {
    ArchivedOrder(id: statement.string(0), type: statement.string(1), campus: statement.string(2),
                  publisher: statement.string(3), runner: statement.optionalString(4),
                  status: statement.string(5), tip: statement.int(6), createdAt: statement.int64(7),
                  closedAt: statement.int64(8), revision: statement.int64(9),
                  publisherRating: statement.optionalInt(10), runnerRating: statement.optionalInt(11),
                  runnerEarning: statement.int(12), participants: participantList(statement.optionalString(14)),
                  encoded: statement.bytes(13))
}

private func participantList(_ joined: String?) -> [String] {
    guard let joined else { return [] }
    return joined.split(separator: Schema.participantSeparator, omittingEmptySubsequences: true).map(String.init).sorted()
}
