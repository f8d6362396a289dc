// `board.list` on a node when the boards are spread over several partitions. Each partition lists
// its part in the listing's order, by cursor (`node.board_list`), and the node merges the parts,
// asking a part for its next page only when the merge cannot go on without it: a part whose page is
// used up and that has more may hold the next order. A page by `offset` needs the first `offset +
// limit` orders of the whole board, up to 10,100: more than one NATS message holds, so parts are
// read in pages of at most 100 and the orders before the offset are counted, not kept. `total` is
// the sum of the parts' totals (a part counts every match, whatever the cursor), and the page's
// cursor is the one a node holding every board would give.
//
// Sans-I/O: `start` and `receive` say which parts to ask for what; BoardReads.swift sends them.
import BangbangApplication
import BangbangCore
import InboxProtocol
import PartitionOwner

package struct BoardListWalk {
    /// A page asked of a part: its orders after `cursor` (nil: from its first), at most `limit`.
    package struct Ask: Sendable, Equatable {
        let part: Int
        package let cursor: ListCursor?
        package let limit: Int
    }

    package enum Step: Sendable, Equatable {
        /// Send these; `receive` each answer.
        case ask([Ask])
        /// Other answers are still awaited.
        case wait
        /// The listing's page.
        case done(BoardListing.Merged)
    }

    /// The most a part is asked for at once: `node.board_list`'s limit.
    static let largestPartPage = 100

    private struct Part {
        package var page: [BoardListAnswer.Entry] = []
        var head = 0
        var hasMore = true
        var isAsked = false
        var isCounted = false
        /// Where the part's next page starts.
        package var cursor: ListCursor?

        var isUsedUp: Bool { head == page.count }
    }

    let query: OrderListQuery
    private let largestPage: Int
    private var parts: [Part]
    private var total = 0
    /// Orders of the whole listing merged so far, skipped or kept.
    private var merged = 0
    private var kept: [BoardListAnswer.Entry] = []

    init(query: OrderListQuery, partCount: Int, largestPage: Int = largestPartPage) {
        precondition(partCount > 0 && largestPage > 0, "a walk reads at least one part, at least one order at a time")
        self.query = query
        self.largestPage = largestPage
        parts = Array(repeating: Part(cursor: query.after), count: partCount)
        kept.reserveCapacity(query.limit)
    }

    private var wanted: Int { query.offset + query.limit }

    /// The first page of every part.
    package mutating func start() -> [Ask] {
        parts.indices.map { ask($0) }
    }

    /// A part's answer to what it was asked; what to do next.
    package mutating func receive(_ answer: BoardListAnswer.Answer, from index: Int) -> Step {
        precondition(parts[index].isAsked, "a part answers only what it was asked")
        var part = parts[index]
        part.isAsked = false
        if !part.isCounted {
            total += Int(answer.total)
            part.isCounted = true
        }
        part.page = answer.entries
        part.head = 0
        // A part that says it has more always sends something; one that sends nothing is at its end.
        part.hasMore = answer.hasMore && !answer.entries.isEmpty
        if let last = answer.entries.last { part.cursor = Self.position(of: last) }
        parts[index] = part
        return advance()
    }

    private mutating func advance() -> Step {
        guard !parts.contains(where: \.isAsked) else { return .wait }
        while merged < wanted {
            let starved = parts.indices.filter { parts[$0].isUsedUp && parts[$0].hasMore }
            if !starved.isEmpty { return .ask(starved.map { ask($0) }) }
            var best: Int?
            for index in parts.indices where !parts[index].isUsedUp {
                guard let current = best else {
                    best = index
                    continue
                }
                if query.sort.precedes(Self.key(parts[index].page[parts[index].head]), Self.key(parts[current].page[parts[current].head])) {
                    best = index
                }
            }
            guard let best else { break }
            if merged >= query.offset { kept.append(parts[best].page[parts[best].head]) }
            parts[best].head += 1
            merged += 1
        }
        let anyLeft = parts.contains { !$0.isUsedUp || $0.hasMore }
        return .done(BoardListing.Merged(entries: kept, total: total, nextCursor: anyLeft ? kept.last.map(Self.position) : nil))
    }

    private mutating func ask(_ index: Int) -> Ask {
        parts[index].isAsked = true
        return Ask(part: index, cursor: parts[index].cursor, limit: min(largestPage, wanted - merged))
    }

    private static func key(_ entry: BoardListAnswer.Entry) -> (Int64, OrderID) { (entry.key, OrderID(rawValue: entry.id)) }

    private static func position(of entry: BoardListAnswer.Entry) -> ListCursor {
        ListCursor(key: entry.key, id: OrderID(rawValue: entry.id))
    }
}
