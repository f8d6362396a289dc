// What the `bangbang admin` command line (Sources/bangbang/Admin/) needs to know of the server
// beyond its public configuration types: the names of the files in a data directory, which
// command-line options are the server's own, and how journal records are named. `package`
// access: the executable is the only user, so none of it is an API. The rest of its surface is
// `AdminSecret` (read) and `OfflineAdmin` (run on a stopped server).
import BangbangApplication
import BangbangStorage

/// The files a server keeps in its data directory, besides journal segments and snapshots.
package enum DataDirectoryFiles {
    /// The order archive (SQLite).
    package static let archive = Application.archiveFileName
    /// The secret that signs session tokens; a backup copies it so issued tokens stay valid.
    /// (The admin secret, written afresh at every start, is `AdminSecret`'s.)
    package static let sessionSecret = SecretFile.name
}

package enum ServerOptions {
    /// Whether `--name` is a server setting followed by a value (false: a flag); nil when it is
    /// not a server setting at all.
    package static func takesValue(_ name: String) -> Bool? {
        SettingsTable.named(name).map { $0.kind != .flag }
    }
}

package enum JournalRecordNames {
    /// "account.registered", "order.accepted", … for a journal record's payload.
    package static func kind(of payload: [UInt8]) -> String {
        guard let entry = try? JournalEntry.decode(payload) else { return "unreadable" }
        switch entry {
        case .account(let event):
            let label = String(describing: event).prefix { $0 != "(" }
            return "account.\(label)"
        case .order(_, let event):
            return "order.\(OrderNotifications.changeName(event.change))"
        }
    }
}
