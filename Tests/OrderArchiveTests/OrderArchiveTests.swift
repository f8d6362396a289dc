import Foundation
import Synchronization
import Testing
@testable import OrderArchive

@Suite struct OrderArchiveTests {
    @Test func reopeningKeepsOrdersAndWatermark() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        let orders = (1...5).map { makeOrder($0) }
        do {
            let archive = try OrderArchive(path: path)
            #expect(try archive.watermark() == 0)
            try archive.archive(orders, throughSequence: 42)
        }
        let reopened = try OrderArchive(path: path)
        #expect(try reopened.watermark() == 42)
        for order in orders { #expect(try reopened.order(id: order.id) == order) }
        #expect(try reopened.order(id: "missing") == nil)
    }

    @Test func theFollowedPositionIsKeptApartFromTheWatermarkAndNeverGoesBack() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        do {
            let archive = try OrderArchive(path: path)
            #expect(try archive.followedPosition() == 0)
            try archive.archive([makeOrder(1)], throughSequence: 0, followedThrough: 7)
            try archive.archive([makeOrder(2)], throughSequence: 30)
            try archive.archive([makeOrder(3)], throughSequence: 0, followedThrough: 5)
            #expect(try archive.followedPosition() == 7)
            #expect(try archive.watermark() == 30)
        }
        let reopened = try OrderArchive(path: path)
        #expect(try reopened.followedPosition() == 7)
        #expect(try reopened.order(id: "order-3") != nil)
    }

    @Test func everyOrderIsReadPageByPageInIdOrder() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        #expect(try archive.orders(after: nil, limit: 10).isEmpty)
        let orders = (1...25).map { makeOrder($0) }
        try archive.archive(orders.shuffled(), throughSequence: 1)
        var read: [ArchivedOrder] = []
        var after: String?
        while case let page = try archive.orders(after: after, limit: 7), let last = page.last {
            #expect(page.count <= 7)
            read += page
            after = last.id
        }
        #expect(read == orders.sorted { $0.id < $1.id })
    }

    @Test func archivingTheSameBatchTwiceChangesNothing() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        let orders = (1...3).map { makeOrder($0, earning: 100 * $0) }
        try archive.archive(orders, throughSequence: 10)
        try archive.archive(orders, throughSequence: 10)
        #expect(try archive.orders(of: "alice", as: .publisher, limit: 10).count == 3)
        #expect(try archive.runnerTotals(of: "bob") == ["completed": ArchivedRunnerTotals(count: 3, earned: 600, ratingCount: 1, ratingStars: 5)])
        #expect(try archive.watermark() == 10)
    }

    @Test func newerRevisionWinsAndOlderIsIgnored() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        let second = makeOrder(1, revision: 2, earning: 200)
        try archive.archive([second], throughSequence: 5)
        try archive.archive([makeOrder(1, revision: 1, earning: 100)], throughSequence: 6)
        #expect(try archive.order(id: second.id) == second)
        let third = makeOrder(1, revision: 3, earning: 300)
        try archive.archive([third], throughSequence: 4)
        #expect(try archive.order(id: third.id) == third)
        // The watermark never goes back.
        #expect(try archive.watermark() == 6)
    }

    @Test func anotherApplicationsDatabaseIsRefusedAndLeftAsItWas() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("other.sqlite")
        executeRaw("PRAGMA application_id = 7; CREATE TABLE notes(text TEXT); INSERT INTO notes VALUES('hi');", at: path)
        let before = directory.contents(of: "other.sqlite")
        #expect(throws: ArchiveError.foreignDatabase(applicationID: 7)) { try OrderArchive(path: path) }
        #expect(directory.contents(of: "other.sqlite") == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndLeftAsItWas() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("notes.txt")
        let text = Data(String(repeating: "not a database\n", count: 300).utf8)
        try text.write(to: URL(fileURLWithPath: path))
        #expect(throws: ArchiveError.notADatabase) { try OrderArchive(path: path) }
        #expect(directory.contents(of: "notes.txt") == text)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        do { _ = try OrderArchive(path: path) }
        executeRaw("PRAGMA user_version = \(Schema.version + 1)", at: path)
        #expect(throws: ArchiveError.newerSchema(version: Schema.version + 1)) { try OrderArchive(path: path) }
    }

    @Test(arguments: [ArchiveFaultPoint.beforeBegin, .afterInsert, .beforeCommit, .afterCommit])
    func aFailedWriteLeavesThePreviousStateOrTheWholeBatch(point: ArchiveFaultPoint) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        let kept = (1...3).map { makeOrder($0) }
        let batch = (4...8).map { makeOrder($0) } + [makeOrder(1, revision: 2)]
        do { try OrderArchive(path: path).archive(kept, throughSequence: 7) }
        do {
            let faulty = try OrderArchive(path: path, faultInjection: FaultTrigger(at: point).injection)
            #expect(throws: ArchiveError.storageUnavailable("injected at \(point)")) {
                try faulty.archive(batch, throughSequence: 20)
            }
        }
        let reopened = try OrderArchive(path: path)
        let committed = point == .afterCommit
        #expect(try reopened.watermark() == (committed ? 20 : 7))
        let stored = try reopened.orders(of: "alice", as: .publisher, limit: 100)
        #expect(stored.count == (committed ? 8 : 3))
        #expect(try reopened.order(id: "order-1")?.revision == (committed ? 2 : 1))
        for order in batch.dropLast() { #expect((try reopened.order(id: order.id) != nil) == committed) }
    }

    @Test func aFullDiskFailsTheBatchAndKeepsThePreviousState() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        let kept = (1...3).map { makeOrder($0) }
        try archive.archive(kept, throughSequence: 3)
        try archive.limitWriterPageCount(to: archive.writerPageCount())
        let big = (4...10).map { makeOrder($0, payloadSize: 64 * 1024) }
        #expect {
            try archive.archive(big, throughSequence: 10)
        } throws: { error in
            if case ArchiveError.storageUnavailable = error { return true }
            return false
        }
        #expect(try archive.watermark() == 3)
        #expect(try archive.orders(of: "alice", as: .publisher, limit: 100).map(\.id) == kept.reversed().map(\.id))
        // Small writes that fit still go through on the same connection.
        try archive.archive([makeOrder(1, revision: 2)], throughSequence: 4)
        #expect(try archive.watermark() == 4)
    }

    @Test func aBackupOpensAsAnArchiveWithTheSameContents() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        let orders = (1...50).map { makeOrder($0, payloadSize: 512) }
        try archive.archive(orders, throughSequence: 99)
        let backupPath = directory.file("backup.sqlite")
        try archive.backup(to: backupPath)
        // Writes after the backup are not in it.
        try archive.archive([makeOrder(51)], throughSequence: 100)
        #expect(!FileManager.default.fileExists(atPath: backupPath + ".tmp"))

        let restored = try OrderArchive(path: backupPath)
        #expect(try restored.watermark() == 99)
        #expect(try restored.orders(of: "alice", as: .publisher, limit: 100) == orders.reversed())
        #expect(try restored.order(id: "order-51") == nil)
    }
}
