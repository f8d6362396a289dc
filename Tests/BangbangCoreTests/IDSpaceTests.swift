// The ids an account partition hands out (docs/scale-out.md, 7b item 4): the first id of a space
// from any point, against counting up; a space's ids placed densely in the account table, others
// kept aside; registrations that take their partition's ids, across a snapshot read back.
import Foundation
import Testing
import TestSupport
@testable import BangbangCore

@Suite struct IDSpaceTests {
    @Test(arguments: [1, 2, 3, 4, 7, 64])
    func theFirstIdAtLeastAnyIdIsWhatCountingUpFinds(partitions: Int) {
        for partition in 0..<partitions {
            let space = IDSpace(partitions: partitions, partition: partition)
            for start in UInt64(0)...300 {
                let counted = (max(start, 1)...).first { $0 % UInt64(partitions) == UInt64(partition) }!
                #expect(space.firstID(atLeast: start) == counted, "\(space) from \(start)")
                #expect(space.contains(counted))
                let ordinal = space.ordinal(of: counted)
                #expect(ordinal.map(space.id(ordinal:)) == counted)
                if start >= 1, start != counted { #expect(!space.contains(start) && space.ordinal(of: start) == nil) }
            }
            #expect(space.ordinal(of: space.firstID(atLeast: 1)) == (partition == 0 ? 1 : 0),
                    "the first id has the first place (after 0's, in partition 0)")
            #expect(space.firstID(atLeast: 0) != 0, "0 is never handed out")
        }
    }

    private static func record(_ tag: Int) -> AccountRecord {
        AccountRecord(phone: PhoneNumber(rawValue: "+86138\(tag)"), nickname: "n\(tag)",
                      registeredAt: Timestamp(milliseconds: Int64(tag)), sessions: [])
    }

    /// A partition's ids, every 64th, fill pages as one partition's consecutive ids do: none is
    /// kept aside; an id of another partition is, and is found there.
    @Test func aPartitionsIdsFillItsPagesAsOnePartitionsDo() {
        let space = IDSpace(partitions: 64, partition: 5)
        var table = AccountTable(space: space)
        var model: [UserID: AccountRecord] = [:]
        for ordinal in 0..<UInt64(3 * AccountTable.pageSize + 5) {
            let user = UserID(5 + 64 * ordinal)
            table.insert(Self.record(Int(ordinal)), for: user)
            model[user] = Self.record(Int(ordinal))
        }
        #expect(table.outlierCount == 0)
        let stranger = UserID(6)
        table.insert(Self.record(-1), for: stranger)
        model[stranger] = Self.record(-1)
        #expect(table.outlierCount == 1)
        #expect(table.count == model.count)
        #expect(Dictionary(uniqueKeysWithValues: table.records.map { ($0.user, $0.record) }) == model)
        for (user, record) in model { #expect(table.record(user) == record) }
        #expect(table.record(UserID(5 + 64 * UInt64(3 * AccountTable.pageSize + 5))) == nil && table.record(UserID(7)) == nil)

        // Loaded from a snapshot's list, the same layout.
        let loaded = AccountTable(expecting: Array(model.keys), space: space)
        var filled = loaded
        for (user, record) in model { filled.insert(record, for: user) }
        #expect(filled.outlierCount == 1 && filled == table)
    }

    /// Registrations on partition 2 of 4 take ids 2, 6, 10 …; the state read back from its
    /// snapshot form and placed in the partition's space is the same state, and the next
    /// registration goes on from there.
    @Test func registrationsTakeTheIdsOfTheirPartitionAcrossASnapshot() throws {
        let space = IDSpace(partitions: 4, partition: 2)
        var policy = AccountPolicy()
        policy.userIDs = space
        var harness = AccountHarness(policy: policy)
        let users = try (1...5).map { try harness.logIn("1380013800\($0)").user }
        #expect(users == ([2, 6, 10, 14, 18] as [UInt64]).map { UserID($0) })
        #expect(try harness.logIn("13800138001").user == UserID(2), "a known phone logs in to its account")
        #expect(harness.store.state.accounts.outlierCount == 0)

        let snapshot = try JSONEncoder().encode(harness.store.state)
        let read = try JSONDecoder().decode(AccountState.self, from: snapshot)
        #expect(read.idSpace == .all, "a snapshot does not name a space")
        let placed = read.placed(in: space)
        #expect(placed == harness.store.state && placed.idSpace == space && placed.accounts.outlierCount == 0)
        // A store made from the snapshot with the partition's policy places it so.
        var restored = AccountHarness(policy: policy)
        restored.store = AccountStore(policy: policy, state: read)
        #expect(restored.store.state == harness.store.state && restored.store.state.idSpace == space)
        #expect(try restored.logIn("13800138009").user == UserID(22))
        // Read with every id's policy instead, the ids it already gave stay where they are and
        // the next one is simply the next id: the space is the deployment's to give, every time.
        var unplaced = AccountHarness()
        unplaced.store = AccountStore(state: read)
        #expect(try unplaced.logIn("13800138009").user == UserID(19))
    }
}

/// A board partition's shard publishes orders whose serials are its partition's, so the id names
/// the partition; a snapshot's orders of another partition are refused, not taken in.
@Suite struct OrderSerialSpaceTests {
    @Test func aBoardPartitionsShardPublishesSerialsOfItsOwn() throws {
        let serials = IDSpace(partitions: 8, partition: 3)
        var driver = ShardDriver(index: 1, serials: serials)
        let ids = try (0..<5).map { _ throws(DomainError) in try driver.publish(Fixture.bounty()) }
        #expect(ids.map(\.serial) == [3, 11, 19, 27, 35] && ids.allSatisfy { $0.shard == 1 })
        #expect(driver.shard.openCount == 5)
        try driver.run(.accept(isVerifiedRunner: true), on: ids[2], by: Fixture.runner)
        #expect(driver.shard.openCount == 4 && driver.status(ids[2]) == .accepted)

        // Replayed into a shard of the same partition, the same shard; its next order goes on.
        var replayed = BoardShard(index: 1, serials: serials)
        for event in driver.journal { replayed.apply(event) }
        #expect(replayed == driver.shard)
        #expect(replayed.nextOrderID == OrderID(shard: 1, serial: 43))

        // A snapshot's orders are taken only by a shard of their partition.
        let orders = Array(driver.shard.orders.values)
        #expect(BoardShard(index: 1, nextSerial: driver.shard.nextSerial, restoring: orders, serials: serials) == driver.shard)
        #expect(BoardShard(index: 1, nextSerial: driver.shard.nextSerial, restoring: orders,
                           serials: IDSpace(partitions: 8, partition: 4)) == nil)
        #expect(BoardShard(index: 1, nextSerial: driver.shard.nextSerial, restoring: orders) != nil,
                "every serial is of the one partition of a single node")

        // A shard decoded from a snapshot (every serial) placed in its partition's space: the same
        // orders, and the next serial its partition's; placed in another's, refused.
        let decoded = try #require(BoardShard(index: 1, nextSerial: driver.shard.nextSerial, restoring: orders))
        let placed = try #require(decoded.handingOut(serials))
        #expect(placed == driver.shard && placed.nextOrderID == OrderID(shard: 1, serial: 43))
        #expect(decoded.nextOrderID == OrderID(shard: 1, serial: 36), "unplaced, it would hand out the next serial of all")
        #expect(decoded.handingOut(IDSpace(partitions: 8, partition: 4)) == nil)
    }
}
