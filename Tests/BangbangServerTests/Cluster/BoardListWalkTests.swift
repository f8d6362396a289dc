// `board.list` walked over the parts of several partitions, by cursor, in pages smaller than the
// listing needs: whatever way the orders are spread, whatever page, offset or cursor is asked and
// in whatever order the parts answer, the page is the one a node holding every board lists, with
// the same total and cursor, and following the cursors reads the whole board once, in order.
import BangbangCore
import InboxProtocol
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct BoardListWalkTests {
    /// A part as a partition's owner answers `node.board_list`: its matches in the listing's
    /// order, after the cursor, at most the limit, and its total whatever the cursor.
    struct Part {
        let sorted: [BoardListAnswer.Entry]

        func answer(_ ask: BoardListWalk.Ask, sort: OrderSort) -> BoardListAnswer.Answer {
            let after = sorted.filter { entry in
                ask.cursor.map { sort.precedes(($0.key, $0.id), (entry.key, OrderID(rawValue: entry.id))) } ?? true
            }
            return BoardListAnswer.Answer(sequences: [:], total: UInt32(sorted.count), hasMore: after.count > ask.limit,
                                          entries: Array(after.prefix(ask.limit)))
        }
    }

    /// Runs a walk to its end, answering the outstanding asks in a random order; every ask is
    /// checked against the part page limit.
    static func walk(_ query: OrderListQuery, parts: [Part], largestPage: Int,
                     using random: inout SeededGenerator) -> (BoardListing.Merged, asks: Int) {
        var walk = BoardListWalk(query: query, partCount: parts.count, largestPage: largestPage)
        var outstanding = walk.start()
        var asks = outstanding.count
        while !outstanding.isEmpty {
            let ask = outstanding.remove(at: Int.random(in: 0..<outstanding.count, using: &random))
            #expect((1...largestPage).contains(ask.limit), "\(ask)")
            switch walk.receive(parts[ask.part].answer(ask, sort: query.sort), from: ask.part) {
            case .wait: continue
            case .ask(let more):
                #expect(outstanding.isEmpty, "asks only once every answer is in")
                asks += more.count
                outstanding += more
            case .done(let merged):
                #expect(outstanding.isEmpty)
                return (merged, asks)
            }
        }
        Issue.record("the walk ended without a page")
        return (BoardListing.Merged(entries: [], total: -1, nextCursor: nil), asks)
    }

    @Test(arguments: 0..<60)
    func thePageIsThePageOfTheWholeBoard(seed: UInt64) {
        var random = SeededGenerator(seed: 0x3A1C + seed)
        let sort = OrderSort.allCases.randomElement(using: &random)!
        // Keys repeat often, so ties on the key fall to the id.
        let board = (1..<Int.random(in: 1...61, using: &random)).map { id in
            BoardListAnswer.Entry(key: Int64.random(in: 0...8, using: &random), id: UInt64(id), order: Array("{\"id\":\(id)}".utf8))
        }
        func ordered(_ entries: [BoardListAnswer.Entry]) -> [BoardListAnswer.Entry] {
            entries.sorted { sort.precedes(($0.key, OrderID(rawValue: $0.id)), ($1.key, OrderID(rawValue: $1.id))) }
        }
        let partCount = Int.random(in: 1...5, using: &random)
        var spread = [[BoardListAnswer.Entry]](repeating: [], count: partCount)
        for entry in board { spread[Int.random(in: 0..<partCount, using: &random)].append(entry) }
        let parts = spread.map { Part(sorted: ordered($0)) }
        let whole = ordered(board)
        let largestPage = Int.random(in: 1...6, using: &random)

        // A page by offset, or after a cursor taken from the board (or from between its orders).
        let limit = Int.random(in: 1...12, using: &random)
        var query = OrderListQuery(sort: sort, limit: limit)
        if Bool.random(using: &random), let pick = whole.randomElement(using: &random) {
            query.after = ListCursor(key: pick.key, id: OrderID(rawValue: pick.id))
        } else {
            query.offset = Int.random(in: 0...(board.count + 3), using: &random)
        }
        let rest = whole.filter { entry in
            query.after.map { sort.precedes(($0.key, $0.id), (entry.key, OrderID(rawValue: entry.id))) } ?? true
        }
        let expected = Array(rest.dropFirst(query.offset).prefix(limit))
        let (merged, asks) = Self.walk(query, parts: parts, largestPage: largestPage, using: &random)
        #expect(merged.entries == expected, "seed \(seed)")
        #expect(merged.total == board.count, "every match counted once, whatever the cursor")
        let more = rest.count > query.offset + limit
        #expect(merged.nextCursor == (more ? expected.last.map { ListCursor(key: $0.key, id: OrderID(rawValue: $0.id)) } : nil))
        // Each part is read no further than the page needs: its pages, and one more to see past it.
        let wanted = query.offset + limit
        #expect(asks <= partCount * (wanted / largestPage + 2), "\(asks) asks of \(partCount) parts for \(wanted) orders")
    }

    @Test(arguments: 0..<10)
    func followingTheCursorsReadsTheWholeBoardOnceInOrder(seed: UInt64) {
        var random = SeededGenerator(seed: 0xC0A5 + seed)
        let sort = OrderSort.allCases.randomElement(using: &random)!
        let board = (1...Int.random(in: 20...80, using: &random)).map { id in
            BoardListAnswer.Entry(key: Int64.random(in: 0...5, using: &random), id: UInt64(id), order: [])
        }
        let partCount = Int.random(in: 2...4, using: &random)
        var spread = [[BoardListAnswer.Entry]](repeating: [], count: partCount)
        for entry in board { spread[Int(entry.id) % partCount].append(entry) }
        let parts = spread.map { entries in
            Part(sorted: entries.sorted { sort.precedes(($0.key, OrderID(rawValue: $0.id)), ($1.key, OrderID(rawValue: $1.id))) })
        }
        var read: [BoardListAnswer.Entry] = []
        var query = OrderListQuery(sort: sort, limit: Int.random(in: 1...9, using: &random))
        for _ in 0...board.count {
            let (page, _) = Self.walk(query, parts: parts, largestPage: 4, using: &random)
            read += page.entries
            guard let cursor = page.nextCursor else { break }
            query.after = cursor
        }
        let expected = board.sorted { sort.precedes(($0.key, OrderID(rawValue: $0.id)), ($1.key, OrderID(rawValue: $1.id))) }
        #expect(read == expected, "seed \(seed)")
    }

    /// A part that answers with nothing while saying it has more is at its end: the walk does not
    /// ask it again forever.
    @Test func aPartThatSendsNothingIsAtItsEnd() {
        var walk = BoardListWalk(query: OrderListQuery(limit: 5), partCount: 2, largestPage: 5)
        #expect(walk.start().count == 2)
        #expect(walk.receive(BoardListAnswer.Answer(sequences: [:], total: 3, hasMore: true, entries: []), from: 0) == .wait)
        let entry = BoardListAnswer.Entry(key: 7, id: 9, order: [])
        let step = walk.receive(BoardListAnswer.Answer(sequences: [:], total: 1, hasMore: false, entries: [entry]), from: 1)
        #expect(step == .done(BoardListing.Merged(entries: [entry], total: 4, nextCursor: nil)))
    }
}
