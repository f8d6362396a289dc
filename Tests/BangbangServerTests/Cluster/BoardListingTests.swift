// A node's `board.subscribe` listing merged from the parts of the partitions holding the board:
// whatever way a board's orders are spread over partitions, the merged page is the page one node
// holding them all would list, with the same total and cursor.
import BangbangCore
import InboxProtocol
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct BoardListingTests {
    @Test(arguments: 0..<40)
    func theMergedPageIsThePageOfTheWholeBoard(seed: UInt64) {
        var random = SeededGenerator(seed: 0xB0A4D + seed)
        let sort = OrderSort.allCases.randomElement(using: &random)!
        let query = OrderListQuery(sort: sort, limit: Int.random(in: 1...12, using: &random))
        // Keys repeat often, so ties on the key fall to the id.
        let board = (1..<Int.random(in: 1...41, using: &random)).map { id in
            BoardListAnswer.Entry(key: Int64.random(in: 0...6, using: &random), id: UInt64(id), order: Array("{\"id\":\(id)}".utf8))
        }
        func ordered(_ entries: [BoardListAnswer.Entry]) -> [BoardListAnswer.Entry] {
            entries.sorted { sort.precedes(($0.key, OrderID(rawValue: $0.id)), ($1.key, OrderID(rawValue: $1.id))) }
        }
        let partitions = Int.random(in: 1...5, using: &random)
        var spread = [[BoardListAnswer.Entry]](repeating: [], count: partitions)
        for entry in board { spread[Int.random(in: 0..<partitions, using: &random)].append(entry) }
        let answers = spread.map { entries in
            let sorted = ordered(entries)
            return BoardListAnswer.Answer(sequences: ["bounty": 1], total: UInt32(entries.count), hasMore: sorted.count > query.limit,
                                          entries: Array(sorted.prefix(query.limit)))
        }
        let merged = BoardListing.merge(answers, query: query)
        let whole = ordered(board)
        #expect(merged.entries == Array(whole.prefix(query.limit)), "seed \(seed)")
        #expect(merged.total == board.count)
        let last = merged.entries.last
        #expect(merged.nextCursor == (whole.count > query.limit ? last.map { ListCursor(key: $0.key, id: OrderID(rawValue: $0.id)) } : nil))
    }
}
