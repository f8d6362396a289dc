// The paged table of account records against a dictionary, the model it must behave like: ids
// in order, out of order, far apart, the empty id 0; records changed in place; equality that does
// not depend on where a record was placed.
import Testing
import TestSupport
@testable import BangbangCore

@Suite struct AccountTableTests {
    private static func record(_ tag: Int) -> AccountRecord {
        AccountRecord(phone: PhoneNumber(rawValue: "+86138\(tag)"), nickname: "n\(tag)",
                      registeredAt: Timestamp(milliseconds: Int64(tag)), sessions: [])
    }

    private static func expect(_ table: AccountTable, matches model: [UserID: AccountRecord],
                               sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(table.count == model.count, sourceLocation: sourceLocation)
        var seen: [UserID: AccountRecord] = [:]
        for (user, record) in table.records {
            #expect(seen.updateValue(record, forKey: user) == nil, "\(user) listed twice", sourceLocation: sourceLocation)
        }
        #expect(seen == model, sourceLocation: sourceLocation)
        for (user, record) in model { #expect(table.record(user) == record, sourceLocation: sourceLocation) }
        #expect(Set(table.keys) == Set(model.keys), sourceLocation: sourceLocation)
    }

    @Test func idsInOrderFillPagesOnly() {
        var table = AccountTable()
        var model: [UserID: AccountRecord] = [:]
        for id in 1...UInt64(3 * AccountTable.pageSize + 5) {
            table.insert(Self.record(Int(id)), for: UserID(id))
            model[UserID(id)] = Self.record(Int(id))
        }
        #expect(table.outlierCount == 0)
        Self.expect(table, matches: model)
        #expect(table.record(UserID(0)) == nil && table.record(UserID(UInt64(3 * AccountTable.pageSize + 6))) == nil)
        #expect(table[UserID(2)]?.profile.nickname == "n2")
    }

    @Test func behavesLikeADictionaryWhateverTheOrder() {
        var generator = SeededGenerator(seed: 21)
        let size = UInt64(AccountTable.pageSize)
        for _ in 0..<40 {
            var table = AccountTable()
            var model: [UserID: AccountRecord] = [:]
            for step in 0..<600 {
                let id: UInt64 = switch Int.random(in: 0..<10, using: &generator) {
                case 0..<6: UInt64(model.count + 1)                   // the next id, as registration picks
                case 6..<8: UInt64.random(in: 0...(4 * size), using: &generator)  // a page ahead, or behind
                case 8: UInt64.random(in: 0...UInt64.max, using: &generator)       // anywhere
                default: model.keys.randomElement(using: &generator)?.rawValue ?? 1
                }
                let user = UserID(id)
                if model[user] == nil {
                    table.insert(Self.record(step), for: user)
                    model[user] = Self.record(step)
                } else {
                    #expect(table.modify(user) { $0.nickname = "changed \(step)" })
                    model[user]!.nickname = "changed \(step)"
                }
            }
            for missing in [UserID(0), UserID(UInt64(model.count + 1)), UserID(.max - 1)] where model[missing] == nil {
                #expect(!table.modify(missing) { _ in Issue.record("changed a missing record") })
            }
            Self.expect(table, matches: model)

            // The same records placed from a snapshot, all at once.
            var loaded = AccountTable(expecting: model.keys)
            for (user, record) in model { loaded.insert(record, for: user) }
            Self.expect(loaded, matches: model)
            #expect(loaded == table)
        }
    }

    @Test func aSnapshotsIdsGoToPagesUnlessFarApart() {
        var generator = SeededGenerator(seed: 4)
        let dense = (1...UInt64(1000)).map { UserID($0) }.shuffled(using: &generator)
        var table = AccountTable(expecting: dense)
        for user in dense { table.insert(Self.record(Int(user.rawValue)), for: user) }
        #expect(table.outlierCount == 0)

        // Id 0 is never handed out and has its slot on the first page all the same.
        let sparse = [UserID(1), UserID(3), UserID(.max), UserID(0), UserID(1 << 40)]
        var small = AccountTable(expecting: sparse)
        for user in sparse { small.insert(Self.record(Int(user.rawValue % 1000)), for: user) }
        #expect(small.outlierCount == 2)
        #expect(small.record(UserID(.max)) == Self.record(Int(UInt64.max % 1000)))
        #expect(small.record(UserID(0)) == Self.record(0))
    }

    @Test func equalityIgnoresPlacement() {
        var first = AccountTable(), second = AccountTable()
        let far = UserID(UInt64(AccountTable.pageSize) * 2)
        first.insert(Self.record(1), for: far)      // no page yet: an outlier
        for id in 1..<UInt64(AccountTable.pageSize) * 2 {
            first.insert(Self.record(Int(id)), for: UserID(id))
            second.insert(Self.record(Int(id)), for: UserID(id))
        }
        second.insert(Self.record(1), for: far)     // the next id: a new page
        #expect(first.outlierCount == 1 && second.outlierCount == 0)
        #expect(first == second)
        second.modify(far) { $0.nickname = "other" }
        #expect(first != second)
    }

    @Test func aLaterPageTakesOverItsOutliers() {
        var table = AccountTable()
        let ahead = UserID(UInt64(AccountTable.pageSize) + 3)
        table.insert(Self.record(0), for: ahead)
        #expect(table.outlierCount == 1)
        for id in 1...UInt64(AccountTable.pageSize) + 1 { table.insert(Self.record(Int(id)), for: UserID(id)) }
        #expect(table.outlierCount == 0)
        #expect(table.record(ahead) == Self.record(0))
        #expect(table.count == AccountTable.pageSize + 2)
    }

    @Test func aPageSlotIsARecordWithNoTag() {
        #expect(MemoryLayout<AccountRecord?>.stride == MemoryLayout<AccountRecord>.stride)
    }
}
