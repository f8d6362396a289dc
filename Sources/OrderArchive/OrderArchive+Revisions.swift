// Which revision of each order the archive holds, without reading the orders: lets the archiver
// skip what is already stored (every closed order in memory is offered again after a restart).
import CSQLite

extension OrderArchive {
    /// The stored revision of each of `ids` the archive holds; absent ids are left out.
    public func revisions(of ids: [String]) throws(ArchiveError) -> [String: Int64] {
        try withReader { (connection) throws(ArchiveError) in
            let statement = try connection.statement("SELECT revision FROM orders WHERE id = ?1")
            var found: [String: Int64] = [:]
            for id in ids {
                sqlite3_reset(statement.handle)
                statement.bind(1, id)
                if try statement.step() { found[id] = statement.int64(0) }
            }
            sqlite3_reset(statement.handle)
            return found
        }
    }
}
