import CSQLite
import Foundation
@testable import OrderArchive

struct TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "order-archive-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func contents(of name: String) -> Data? { FileManager.default.contents(atPath: file(name)) }
}

func makeOrder(_ number: Int, publisher: String = "alice", runner: String? = "bob",
               closedAt: Int64? = nil, revision: Int64 = 1, earning: Int = 300,
               payloadSize: Int = 16) -> ArchivedOrder {
    ArchivedOrder(id: "order-\(number)", type: "delivery", campus: "north", publisher: publisher,
                  runner: runner, status: "completed", tip: number % 7, createdAt: 1_000 * Int64(number),
                  closedAt: closedAt ?? 1_000 * Int64(number) + 500, revision: revision,
                  publisherRating: number % 2 == 0 ? 5 : nil, runnerRating: 4, runnerEarning: earning,
                  encoded: (0..<payloadSize).map { UInt8(truncatingIfNeeded: $0 &+ number &+ Int(revision)) })
}

/// Runs SQL on the file through a plain SQLite connection, as another program would.
func executeRaw(_ sql: String, at path: String) {
    var handle: OpaquePointer?
    precondition(sqlite3_open(path, &handle) == SQLITE_OK)
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    precondition(code == SQLITE_OK, String(cString: sqlite3_errmsg(handle)))
    sqlite3_close(handle)
}

/// The one integer `sql` returns, through a plain SQLite connection.
func integer(_ sql: String, at path: String) -> Int64 {
    rows(sql, at: path).first.flatMap { Int64($0) } ?? -1
}

/// The names of the indexes created in the file (not SQLite's own), sorted.
func indexes(at path: String) -> [String] {
    rows("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name", at: path)
}

/// The steps of `EXPLAIN QUERY PLAN sql`, such as "SEARCH orders USING INDEX …".
func queryPlan(_ sql: String, at path: String) -> [String] {
    rows("EXPLAIN QUERY PLAN " + sql, at: path, column: 3)
}

/// The first column (or `column`) of every row `sql` returns, as text.
func rows(_ sql: String, at path: String, column: Int32 = 0) -> [String] {
    var handle: OpaquePointer?
    precondition(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
    defer { sqlite3_close(handle) }
    var statement: OpaquePointer?
    precondition(sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(handle)))
    defer { sqlite3_finalize(statement) }
    var values: [String] = []
    while sqlite3_step(statement) == SQLITE_ROW {
        values.append(sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "")
    }
    return values
}

/// Throws at one fault point, once.
final class FaultTrigger: Sendable {
    let point: ArchiveFaultPoint
    init(at point: ArchiveFaultPoint) { self.point = point }

    var injection: OrderArchive.FaultInjection {
        { [point] (reached: ArchiveFaultPoint) throws(ArchiveError) in
            if reached == point { throw .storageUnavailable("injected at \(point)") }
        }
    }
}
