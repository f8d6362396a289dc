import CSQLite

/// One SQLite connection and its cached prepared statements. Used by one thread at a time: the
/// writer only under `OrderArchive.writer`'s lock, a reader only between being taken from and
/// returned to `OrderArchive.readers`; hence `@unchecked Sendable`.
final class Connection: @unchecked Sendable {
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]

    init(path: String, readOnly: Bool) throws(ArchiveError) {
        var handle: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard let handle else { throw .sqlite(code: code, message: "cannot open \(path)") }
        self.handle = handle
        guard code == SQLITE_OK else {
            let error = self.error(code)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws(ArchiveError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// A prepared statement for `sql`, reset and with its bindings cleared.
    func statement(_ sql: String) throws(ArchiveError) -> Statement {
        if let cached = statements[sql] {
            sqlite3_reset(cached.handle)
            sqlite3_clear_bindings(cached.handle)
            return cached
        }
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &raw, nil)
        guard code == SQLITE_OK, let raw else { throw error(code) }
        let statement = Statement(handle: raw, connection: self)
        statements[sql] = statement
        return statement
    }

    /// The integer a one-row query such as a PRAGMA returns.
    func integer(_ sql: String) throws(ArchiveError) -> Int64 {
        let statement = try statement(sql)
        defer { sqlite3_reset(statement.handle) }
        guard try statement.step() else { throw .corrupt("\(sql) returned no row") }
        return statement.int64(0)
    }

    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    func error(_ code: Int32) -> ArchiveError {
        let message = String(cString: sqlite3_errmsg(handle))
        switch code & 0xff {
        case SQLITE_FULL, SQLITE_IOERR: return .storageUnavailable(message)
        case SQLITE_CORRUPT: return .corrupt(message)
        case SQLITE_NOTADB: return .notADatabase
        default: return .sqlite(code: code, message: message)
        }
    }
}

/// A prepared statement owned by its connection's cache.
struct Statement {
    let handle: OpaquePointer
    unowned let connection: Connection

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ index: Int32, _ value: Int?) {
        bind(index, value.map(Int64.init))
    }

    func bind(_ index: Int32, _ value: String?) {
        guard let value else { sqlite3_bind_null(handle, index); return }
        let length = Int32(value.utf8.count)
        _ = value.withCString { bangbang_sqlite3_bind_text_transient(handle, index, $0, length) }
    }

    func bind(_ index: Int32, _ value: [UInt8]) {
        // A nil pointer would bind NULL, so an empty blob is bound as a zero-length blob.
        guard !value.isEmpty else { sqlite3_bind_zeroblob(handle, index, 0); return }
        _ = value.withUnsafeBytes {
            bangbang_sqlite3_bind_blob_transient(handle, index, $0.baseAddress, Int32($0.count))
        }
    }

    /// Steps once: true when a row is ready, false when the statement is done.
    func step() throws(ArchiveError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(code)
        }
    }

    func run() throws(ArchiveError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    func bytes(_ column: Int32) -> [UInt8] {
        guard let blob = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: blob, count: count))
    }
}
