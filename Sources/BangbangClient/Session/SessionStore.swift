// Where a logged-in app keeps what it needs to come back without another SMS: the session
// token, and the position in the user's personal stream it has processed, so a new connection
// (or the next launch) resumes exactly after the last event the app handled.
import Foundation

/// What a store keeps between connections and launches.
public struct StoredSession: Sendable, Hashable, Codable {
    /// The login's token; a secret (it logs in as the user for 30 days).
    public var token: String
    /// Whose session it is: the stream position below belongs to this user only.
    public var userID: Int64
    /// `seq` of the last personal event the app processed (or of the login, or of a resync).
    public var lastSeq: Int64

    public init(token: String, userID: Int64, lastSeq: Int64) {
        self.token = token
        self.userID = userID
        self.lastSeq = lastSeq
    }
}

/// Keeps the stored session. The file store is the default; an iOS app plugs in its keychain.
///
/// `save` is called at login, at logout (with nil), and each time the app has processed a
/// personal event (with the new `lastSeq`). A throwing store is not fatal: the connection
/// carries on with what it holds in memory.
public protocol SessionStore: Sendable {
    func load() throws -> StoredSession?
    func save(_ session: StoredSession?) throws
}

/// A session kept in one JSON file, written whole to a temporary file and renamed over the old
/// one, readable only by its owner (0600).
public final class FileSessionStore: SessionStore, @unchecked Sendable {
    // Confinement: `lock` guards the file against two saves at once.
    public let path: String
    private let lock = NSLock()

    public init(path: String) { self.path = path }

    /// `bangbang-session.json` in the user's Application Support folder (on Linux,
    /// `~/.local/share`); the folder is made at the first save.
    public static var standard: FileSessionStore {
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return FileSessionStore(path: base.appendingPathComponent("bangbang-session.json").path)
    }

    public func load() throws -> StoredSession? {
        lock.lock()
        defer { lock.unlock() }
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode(StoredSession.self, from: data)
    }

    public func save(_ session: StoredSession?) throws {
        lock.lock()
        defer { lock.unlock() }
        guard let session else {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            return
        }
        let data = try JSONEncoder().encode(session)
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary])
        }
        guard rename(temporary, path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}

/// A session kept only in memory: for tools (the admin CLI) and tests.
public final class MemorySessionStore: SessionStore, @unchecked Sendable {
    // Confinement: `lock` guards `session`.
    private let lock = NSLock()
    private var session: StoredSession?

    public init(_ session: StoredSession? = nil) { self.session = session }

    public func load() throws -> StoredSession? {
        lock.lock()
        defer { lock.unlock() }
        return session
    }

    public func save(_ session: StoredSession?) throws {
        lock.lock()
        defer { lock.unlock() }
        self.session = session
    }
}
