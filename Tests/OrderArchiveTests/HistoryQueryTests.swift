// The history reads: a user's orders per role, newest created first with ties broken by the
// id's integer value (as the boards order them), paged by cursor; group participants kept in
// step with the stored revision; a runner's totals per status leaving chosen orders out.
import CSQLite
import Foundation
import Testing
@testable import OrderArchive

/// An order with a decimal id, as the server stores them.
private func order(_ id: UInt64, createdAt: Int64, publisher: String = "1", runner: String? = "2",
                   status: String = "completed", revision: Int64 = 1, earning: Int = 100, rating: Int? = nil,
                   participants: [String] = []) -> ArchivedOrder {
    ArchivedOrder(id: String(id), type: participants.isEmpty ? "express" : "group", campus: "north",
                  publisher: publisher, runner: runner, status: status, tip: earning, createdAt: createdAt,
                  closedAt: createdAt + 10, revision: revision, publisherRating: rating, runnerEarning: earning,
                  participants: participants, encoded: [2, UInt8(truncatingIfNeeded: id), UInt8(truncatingIfNeeded: revision)])
}

@Suite struct HistoryQueryTests {
    @Test func ordersPageNewestCreatedFirstWithTiesByIntegerID() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        // 9 and 10 share a creation time: as integers 10 comes first, as text it would not.
        let orders = [order(9, createdAt: 5_000), order(10, createdAt: 5_000), order(100, createdAt: 4_000),
                      order(3, createdAt: 6_000), order(257, createdAt: 4_000), order(8, createdAt: 1_000, publisher: "7")]
        try archive.archive(orders, throughSequence: 1)
        let expected = ["3", "10", "9", "257", "100"]
        #expect(try archive.orders(of: "1", as: .publisher, limit: 10).map(\.id) == expected)

        for limit in 1...4 {
            var seen: [String] = []
            var cursor: CreationCursor?
            while true {
                let page = try archive.orders(of: "1", as: .publisher, before: cursor, limit: limit)
                seen += page.map(\.id)
                guard page.count == limit, let last = page.last else { break }
                cursor = CreationCursor(createdAt: last.createdAt, id: UInt64(last.id)!)
            }
            #expect(seen == expected, "limit \(limit)")
        }
        #expect(try archive.orders(of: "2", as: .runner, before: CreationCursor(createdAt: 5_000, id: 10), limit: 10).map(\.id)
                == ["9", "257", "100", "8"])
        #expect(try archive.orders(of: "1", as: .runner, limit: 10).isEmpty)
        #expect(try archive.orders(of: "1", as: .publisher, limit: 0).isEmpty)
        #expect(try archive.orders(of: "1", as: .publisher, before: CreationCursor(createdAt: .min, id: 0), limit: 5).isEmpty)
        #expect(try archive.orders(of: "1", as: .publisher, before: CreationCursor(createdAt: .max, id: .max), limit: 1).map(\.id) == ["3"])
    }

    @Test func pagesInEachRoleVisitEachOrderOnce() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        // User 3 publishes some orders, runs others, does both on a few; every four share a
        // creation time, so the cursor needs the id.
        var orders: [ArchivedOrder] = []
        for number in 1...23 {
            let publishes = number % 3 != 0
            orders.append(order(UInt64(number), createdAt: 10_000 - Int64(number / 4) * 100, publisher: publishes ? "3" : "4",
                                runner: publishes ? (number % 2 == 0 ? "3" : "5") : "3"))
        }
        orders.append(order(100, createdAt: 20_000, publisher: "4", runner: "5"))
        try archive.archive(orders, throughSequence: 1)

        let roles: [(ArchiveRole, (ArchivedOrder) -> Bool)] = [(.publisher, { $0.publisher == "3" }), (.runner, { $0.runner == "3" })]
        for (role, holds) in roles {
            var pages: [[ArchivedOrder]] = []
            var cursor: CreationCursor?
            while true {
                let page = try archive.orders(of: "3", as: role, before: cursor, limit: 5)
                if page.isEmpty { break }
                pages.append(page)
                cursor = CreationCursor(createdAt: page.last!.createdAt, id: UInt64(page.last!.id)!)
            }
            let expected = orders.filter(holds)
                .sorted { ($0.createdAt, UInt64($0.id)!) > ($1.createdAt, UInt64($1.id)!) }
            #expect(pages.joined().map(\.id) == expected.map(\.id), "\(role)")
            #expect(pages.dropLast().allSatisfy { $0.count == 5 }, "\(role)")
        }
    }

    /// Every query the server runs walks an index; none scans the orders table.
    @Test func everyServerQueryWalksAnIndex() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        _ = try OrderArchive(path: path)
        var queries = [Schema.order, HistorySchema.runnerTotals, "SELECT revision FROM orders WHERE id = ?1"]
        for role in ArchiveRole.allCases {
            queries += [HistorySchema.orders(of: role, afterCursor: false), HistorySchema.orders(of: role, afterCursor: true)]
        }
        for query in queries {
            let plan = queryPlan(query, at: path)
            #expect(plan.contains { $0.hasPrefix("SEARCH orders USING") || $0.hasPrefix("SEARCH participants USING") }, "\(plan)")
            #expect(!plan.contains { $0.hasPrefix("SCAN orders") || $0.hasPrefix("SCAN participants") }, "\(plan)")
        }
    }

    @Test func participantsFollowTheStoredRevision() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        let first = order(21, createdAt: 2_000, runner: nil, revision: 3, participants: ["5", "6"])
        try archive.archive([first, order(22, createdAt: 3_000, runner: nil, participants: ["6"])], throughSequence: 1)
        #expect(try archive.order(id: "21") == first)
        #expect(try archive.orders(of: "6", as: .participant, limit: 10).map(\.id) == ["22", "21"])
        #expect(try archive.orders(of: "6", as: .participant, before: CreationCursor(createdAt: 3_000, id: 22), limit: 10)
                .map(\.id) == ["21"])

        // An older revision changes nothing; a newer one replaces the participants.
        try archive.archive([order(21, createdAt: 2_000, runner: nil, revision: 2, participants: ["7"])], throughSequence: 2)
        #expect(try archive.orders(of: "7", as: .participant, limit: 10).isEmpty)
        try archive.archive([order(21, createdAt: 2_000, runner: nil, revision: 4, participants: ["7", "5"])], throughSequence: 3)
        #expect(try archive.orders(of: "7", as: .participant, limit: 10).map(\.id) == ["21"])
        #expect(try archive.orders(of: "6", as: .participant, limit: 10).map(\.id) == ["22"])
        #expect(try archive.order(id: "21")?.participants == ["5", "7"])
    }

    @Test func runnerTotalsPerStatusLeaveOutExcludedOrders() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let archive = try OrderArchive(path: directory.file("archive.sqlite"))
        try archive.archive([
            order(1, createdAt: 1, earning: 300, rating: 5), order(2, createdAt: 2, earning: 200),
            order(3, createdAt: 3, earning: 100, rating: 3), order(4, createdAt: 4, status: "cancelled", earning: 50, rating: 1),
            order(5, createdAt: 5, status: "expired", earning: 0), order(6, createdAt: 6, runner: "9", earning: 999),
        ], throughSequence: 1)
        #expect(try archive.runnerTotals(of: "2") == [
            "completed": ArchivedRunnerTotals(count: 3, earned: 600, ratingCount: 2, ratingStars: 8),
            "cancelled": ArchivedRunnerTotals(count: 1, earned: 50, ratingCount: 1, ratingStars: 1),
            "expired": ArchivedRunnerTotals(count: 1, earned: 0),
        ])
        #expect(try archive.runnerTotals(of: "2", excluding: ["1", "4", "404", "quote\"and\\slash"]) == [
            "completed": ArchivedRunnerTotals(count: 2, earned: 300, ratingCount: 1, ratingStars: 3),
            "expired": ArchivedRunnerTotals(count: 1, earned: 0),
        ])
        #expect(try archive.runnerTotals(of: "nobody").isEmpty)
    }
}

@Suite struct SchemaMigrationTests {
    /// The version 1 schema, as the first archive build created it.
    static let version1Tables = """
        CREATE TABLE orders(id TEXT PRIMARY KEY, type TEXT NOT NULL, campus TEXT NOT NULL, publisher TEXT NOT NULL,
            runner TEXT, status TEXT NOT NULL, tip INTEGER NOT NULL, created_at INTEGER NOT NULL,
            closed_at INTEGER NOT NULL, revision INTEGER NOT NULL, publisher_rating INTEGER, runner_rating INTEGER,
            runner_earning INTEGER NOT NULL, encoded BLOB NOT NULL);
        CREATE INDEX orders_by_publisher ON orders(publisher, closed_at DESC, id);
        CREATE INDEX orders_by_runner ON orders(runner, closed_at DESC, id);
        CREATE TABLE watermark(id INTEGER PRIMARY KEY CHECK(id = 1), sequence INTEGER NOT NULL);
        INSERT INTO orders VALUES('5', 'express', 'north', '1', '2', 'completed', 300, 1000, 2000, 4, 5, NULL, 300, x'0205');
        INSERT INTO watermark VALUES(1, 77);
        PRAGMA application_id = 1111638354;
        """
    static let version1 = version1Tables + "PRAGMA user_version = 1;"

    /// The version 2 schema, as the build with the history reads created it, holding a group order.
    static let version2 = version1Tables + """
        CREATE INDEX orders_by_publisher_created ON orders(publisher, created_at DESC);
        CREATE INDEX orders_by_runner_created ON orders(runner, created_at DESC);
        CREATE TABLE participants(user_id TEXT NOT NULL, order_id TEXT NOT NULL, order_created_at INTEGER NOT NULL,
            PRIMARY KEY(user_id, order_created_at, order_id)) WITHOUT ROWID;
        CREATE INDEX participants_by_order ON participants(order_id);
        INSERT INTO orders VALUES('7', 'group', 'north', '1', NULL, 'completed', 0, 1500, 2500, 2, NULL, NULL, 0, x'0207');
        INSERT INTO participants VALUES('8', '7', 1500), ('9', '7', 1500);
        PRAGMA user_version = 2;
        """

    /// What a version 3 archive holds besides the tables: exactly the indexes by creation time.
    static let version3Indexes = ["orders_by_publisher_created", "orders_by_runner_created", "participants_by_order"]

    @Test func aVersion1ArchiveIsUpgradedToTheCurrentSchemaAndKeepsItsOrders() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        executeRaw(Self.version1, at: path)
        let archive = try OrderArchive(path: path)
        #expect(try archive.watermark() == 77)
        #expect(try archive.order(id: "5")?.encoded == [2, 5])
        #expect(try archive.orders(of: "1", as: .publisher, limit: 5).map(\.id) == ["5"])
        #expect(try archive.runnerTotals(of: "2")["completed"] == ArchivedRunnerTotals(count: 1, earned: 300, ratingCount: 1, ratingStars: 5))
        try archive.archive([order(6, createdAt: 3_000, runner: nil, participants: ["8"])], throughSequence: 78)
        #expect(try archive.orders(of: "8", as: .participant, limit: 5).map(\.id) == ["6"])
        #expect(try archive.writerPageCount() > 0)
        let reopened = try OrderArchive(path: path)
        #expect(try reopened.orders(of: "8", as: .participant, limit: 5).map(\.id) == ["6"])
        #expect(integer("PRAGMA user_version", at: path) == Schema.version)
        #expect(indexes(at: path) == Self.version3Indexes)
    }

    @Test func aVersion2ArchiveLosesTheClosingTimeIndexesAndKeepsEverythingElse() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        executeRaw(Self.version2, at: path)
        #expect(indexes(at: path).contains("orders_by_publisher"))
        let archive = try OrderArchive(path: path)
        #expect(integer("PRAGMA user_version", at: path) == Schema.version)
        #expect(indexes(at: path) == Self.version3Indexes)
        #expect(try archive.watermark() == 77)
        #expect(try archive.orders(of: "1", as: .publisher, limit: 5).map(\.id) == ["7", "5"])
        #expect(try archive.orders(of: "9", as: .participant, limit: 5).map(\.id) == ["7"])
        #expect(try archive.order(id: "7")?.participants == ["8", "9"])
        #expect(try archive.orders(of: "2", as: .runner, limit: 5).map(\.id) == ["5"])
        _ = try OrderArchive(path: path)
        #expect(integer("PRAGMA user_version", at: path) == Schema.version)
    }

    /// A version 3 archive (the version 2 tables without the closing-time indexes) gains the
    /// followed position, at 0, and keeps its orders.
    @Test func aVersion3ArchiveGainsTheFollowedPosition() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        let version3 = Self.version2.replacingOccurrences(of: "PRAGMA user_version = 2;", with: "PRAGMA user_version = 3;")
            + "DROP INDEX orders_by_publisher; DROP INDEX orders_by_runner;"
        executeRaw(version3, at: path)
        let archive = try OrderArchive(path: path)
        #expect(integer("PRAGMA user_version", at: path) == Schema.version)
        #expect(try archive.followedPosition() == 0)
        #expect(try archive.watermark() == 77)
        #expect(try archive.orders(of: "1", as: .publisher, limit: 5).map(\.id) == ["7", "5"])
        try archive.archive([], throughSequence: 0, followedThrough: 12)
        #expect(try archive.followedPosition() == 12)
        #expect(try archive.watermark() == 77)
    }

    @Test func anUpgradeThatFailsLeavesTheFileAsItWas() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("archive.sqlite")
        // A version 1 file that already has a table the upgrade creates: the upgrade fails part way.
        executeRaw(Self.version1 + "CREATE TABLE participants(x);", at: path)
        #expect(throws: ArchiveError.self) { try OrderArchive(path: path) }
        #expect(integer("PRAGMA user_version", at: path) == 1)
        #expect(indexes(at: path) == ["orders_by_publisher", "orders_by_runner"])
    }
}
