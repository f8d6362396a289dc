// The file store: whole-file writes readable by the owner only, forgetting on logout, and a
// damaged file that is refused rather than half-read.
import Foundation
import Testing
@testable import BangbangClient

@Suite struct SessionStoreTests {
    @Test func theFileStoreKeepsForgetsAndRefusesADamagedFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileSessionStore(path: folder.appendingPathComponent("nested/session.json").path)
        #expect(try store.load() == nil)
        let session = StoredSession(token: "secret-token", userID: 42, lastSeq: 7)
        try store.save(session)
        #expect(try store.load() == session)
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "the token is a secret: \(String(describing: mode))")
        try store.save(StoredSession(token: "secret-token", userID: 42, lastSeq: 8))
        #expect(try store.load()?.lastSeq == 8)
        try store.save(nil)
        #expect(try store.load() == nil && !FileManager.default.fileExists(atPath: store.path))

        try Data("{\"token\": 3".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(throws: (any Error).self) { try store.load() }
        // A connection whose store cannot be read starts logged out instead of failing.
        let connection = BangbangConnection(configuration: ConnectionConfiguration(url: ServerURL(isSecure: false, host: "127.0.0.1",
                                                                                                    port: 9)),
                                            store: store)
        let isLoggedIn = await connection.isLoggedIn
        #expect(!isLoggedIn)
    }
}
