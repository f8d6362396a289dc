// A partition's half of a snapshot (PartitionState.swift): each half read back as written by the
// direct reader and by Codable alike, the two halves of one node's snapshot making it again, and
// a half refused with a clear error when it is the other half, a whole snapshot, cut short or
// damaged, the direct reader agreeing with the tree decoder on every damaged copy.
import BangbangCore
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

@Suite struct PartitionStateTests {
    static let contents = Snapshots.everyField()

    @Test func eachHalfReadsBackAsWritten() throws {
        let boards = Self.contents.boardsPartition
        let accounts = Self.contents.accountsPartition
        #expect(boards.shards.flatMap(\.orders.values).count == 3)
        #expect(accounts.streams[UserID(1)]?.entries.count == 2)
        let boardBytes = try boards.encoded()
        let accountBytes = try accounts.encoded()
        #expect(try BoardsPartitionState.decode(boardBytes) == boards)
        #expect(try AccountsPartitionState.decode(accountBytes) == accounts)
        #expect(try KeyedBinaryDecoder.decode(BoardsPartitionState.self, from: boardBytes.dropFirst()) == boards)
        #expect(try KeyedBinaryDecoder.decode(AccountsPartitionState.self, from: accountBytes.dropFirst()) == accounts)
        #expect(SnapshotContents(boards: boards, accounts: accounts) == Self.contents)
    }

    @Test func aHalfIsNeverReadAsTheOtherOrAsAWholeSnapshot() throws {
        let boardBytes = try Self.contents.boardsPartition.encoded()
        let accountBytes = try Self.contents.accountsPartition.encoded()
        expectRefusal("holds the boards half of a partition's state, not the accounts half") { _ = try AccountsPartitionState.decode(boardBytes) }
        expectRefusal("holds the accounts half of a partition's state, not the boards half") { _ = try BoardsPartitionState.decode(accountBytes) }
        let whole = try Self.contents.encoded()
        expectRefusal("not a partition's snapshot (no half)") { _ = try BoardsPartitionState.decode(whole) }
        expectRefusal("not a partition's snapshot (no half)") { _ = try AccountsPartitionState.decode(whole) }
        expectRefusal("in no format this server reads") { _ = try BoardsPartitionState.decode(try Self.contents.encodedAsJSON()) }
        // And a whole snapshot is not made of a half.
        #expect(throws: (any Error).self) { try SnapshotContents.decode(boardBytes) }
        #expect(throws: (any Error).self) { try SnapshotContents.decode(accountBytes) }
    }

    @Test func refusesAFormatItDoesNotRead() throws {
        var writer = KeyedBinaryWriter(header: SnapshotContents.keyedBinaryTag)
        writer.beginKeyed()
        writer.member("formatVersion", 2)
        writer.member("half", "boards")
        writer.key("shards")
        writer.beginUnkeyed()
        writer.endUnkeyed()
        writer.key("boardSequences")
        writer.beginUnkeyed()
        writer.endUnkeyed()
        writer.endKeyed()
        expectRefusal("boards partition snapshot format 2 is not supported") { _ = try BoardsPartitionState.decode(writer.bytes) }
    }

    @Test func refusesEveryTruncation() throws {
        for bytes in [try Self.contents.boardsPartition.encoded(), try Self.contents.accountsPartition.encoded()] {
            for length in 0..<bytes.count {
                let cut = Array(bytes[..<length])
                #expect(throws: (any Error).self) { try BoardsPartitionState.decode(cut) }
                #expect(throws: (any Error).self) { try AccountsPartitionState.decode(cut) }
            }
        }
    }

    /// The direct reader and Codable over the tree give the same state or both refuse.
    @Test func agreesWithTheTreeDecoderOnDamagedHalves() throws {
        var random = SeededGenerator(seed: 15)
        let halves = [try Self.contents.boardsPartition.encoded(), try Self.contents.accountsPartition.encoded()]
        var refused = 0
        for round in 0..<3_000 {
            let damaged = random.damaged(halves[round % 2], from: 1)
            let boards = try? BoardsPartitionState.decode(damaged)
            let accounts = try? AccountsPartitionState.decode(damaged)
            #expect(boards == (try? KeyedBinaryDecoder.decode(BoardsPartitionState.self, from: damaged.dropFirst())))
            #expect(accounts == (try? KeyedBinaryDecoder.decode(AccountsPartitionState.self, from: damaged.dropFirst())))
            if boards == nil && accounts == nil { refused += 1 }
        }
        #expect(refused > 500, "damage should mostly be refused, not only \(refused) times")
    }

    private func expectRefusal(_ fragment: String, sourceLocation: SourceLocation = #_sourceLocation,
                               _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("accepted; expected a refusal saying \(fragment)", sourceLocation: sourceLocation)
        } catch {
            #expect("\(error)".contains(fragment), "\(error)", sourceLocation: sourceLocation)
        }
    }
}
