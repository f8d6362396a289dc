// A node's question to a board partition's owner: its part of a `board.subscribe` listing. A node
// holding a subscription to a board that several partitions hold asks each for the board's sequence
// when its listing began and its first matches in the listing's order, and merges the parts
// (OrderListPage.mergeSorted) into the reply; the answer is BoardListAnswer's, each order as a
// client is sent it. A node's `board.list` over several partitions pages each part by `cursor`
// (BoardListWalk.swift). Not a client operation: only nodes reach `bb.req.p<n>`, and the operation
// table every connection's request goes through does not know the name. The data is
// `board.subscribe`'s, with an optional `cursor`:
//   {"data": {"types": ["bounty"], "campus": "North", "sort": "tip", "limit": 20}, "id": 1, "op": "node.board_list"}
import BangbangApplication
import BangbangCore
import BangbangProtocol
import InboxProtocol
import JSON

package enum BoardListQuery {
    package static let operation = "node.board_list"

    /// The answer of the owner of the partition the request was sent to, or a refusal of a
    /// malformed question as `board.subscribe` refuses it.
    package static func answer(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let query: OrderListQuery
        do throws(DomainError) {
            query = try BoardOperations.subscriptionQuery(try Arguments(request.data), allowingCursor: true)
        } catch {
            app.metrics.requests.increment(label: "routed:\(error.code.rawValue)")
            return answer(Reply.failure(id: request.id, error: error))
        }
        // Read before listing, as `board.subscribe` does: every change at or below is reflected.
        let sequences = Dictionary(uniqueKeysWithValues: query.filter.types.map { ($0.rawValue, app.boardSequence(of: $0)) })
        OrderOperations.list(query, app: app) { page in
            let entries = page.items.map {
                BoardListAnswer.Entry(key: query.sort.key($0), id: $0.id.rawValue, order: JSONWriter.encode(OrderWire.encode($0)))
            }
            answer(BoardListAnswer.encode(BoardListAnswer.Answer(sequences: sequences, total: UInt32(clamping: page.total),
                                                                 hasMore: page.nextCursor != nil, entries: entries)))
        }
    }
}

/// The node's side: one `board.subscribe` listing from the parts of the partitions that hold the
/// board, merged in the listing's order as the shards' parts are on one node.
package enum BoardListing {
    package struct Merged: Sendable, Equatable {
        /// The page, each order as a client is sent it.
        var entries: [BoardListAnswer.Entry]
        var total: Int
        var nextCursor: ListCursor?

        package init(entries: [BoardListAnswer.Entry], total: Int, nextCursor: ListCursor?) {
            self.entries = entries
            self.total = total
            self.nextCursor = nextCursor
        }
    }

    package static func merge(_ answers: [BoardListAnswer.Answer], query: OrderListQuery) -> Merged {
        let (page, cursor) = OrderListPage.mergeSorted(answers.map(\.entries), query: query,
                                                       anyHasMore: answers.contains(where: \.hasMore)) {
            ($0.key, OrderID(rawValue: $0.id))
        }
        return Merged(entries: page, total: answers.reduce(0) { $0 + Int($1.total) }, nextCursor: cursor)
    }
}

extension BoardListing {
    /// The data of a `board.subscribe` reply made of a merged listing, its orders copied in as
    /// their owners encoded them: the bytes an owner's own reply has for the same orders.
    package static func subscriptionData(_ merged: Merged, sequences: [OrderType: UInt64]) -> [UInt8] {
        var writer = JSONWriter(capacity: merged.entries.reduce(64) { $0 + $1.order.count + 1 })
        writer.beginObject()
        writeOrders(merged.entries, to: &writer)
        writer.key("seq")
        writer.write(.object(Dictionary(uniqueKeysWithValues: sequences.map { ($0.key.rawValue, JSONValue.integer(Int64($0.value))) })))
        writer.key("total")
        writer.write(integer: Int64(merged.total))
        writer.endObject()
        return writer.bytes
    }

    /// `board.list`'s data made of a merged listing (BoardReads.swift), the same way.
    package static func listData(_ merged: Merged) -> [UInt8] {
        var writer = JSONWriter(capacity: merged.entries.reduce(64) { $0 + $1.order.count + 1 })
        writer.beginObject()
        if let cursor = merged.nextCursor {
            writer.key("next_cursor")
            writer.write(string: cursor.token)
        }
        writeOrders(merged.entries, to: &writer)
        writer.key("total")
        writer.write(integer: Int64(merged.total))
        writer.endObject()
        return writer.bytes
    }

    /// The `orders` member, each order's bytes as its owner encoded them.
    private static func writeOrders(_ entries: [BoardListAnswer.Entry], to writer: inout JSONWriter) {
        writer.key("orders")
        writer.beginArray()
        for entry in entries {
            writer.separate()
            writer.write(encoded: entry.order)
        }
        writer.endArray()
    }
}

/// A node's question to a board partition's owner for `board.stats`: how many orders are open on
/// each board in the partition, and how many runners the owner counts watching each board: its own
/// connections' and those every node reports (RunnersOnline.swift), so any owner's count is the
/// cluster's. The node sums the open orders of every partition and takes the highest count of
/// runners (BoardStatsMerge). Not a client operation:
///   {"open": {"bounty": 6, "express": 14, …}, "runners_online": {"bounty": 2, …}}, every type.
package enum BoardCountsQuery {
    package static let operation = "node.board_counts"

    package static func answer(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        guard request.data == nil || request.data == .object([:]) else {
            app.metrics.requests.increment(label: "routed:bad_request")
            return answer(Reply.failure(id: request.id, error: DomainError(.badRequest,
                "\"\(operation)\" takes no data", field: "data")))
        }
        BoardOperations.gatherStats(app) { stats in
            func perType(_ count: (OrderType) -> Int) -> JSONValue {
                .object(Dictionary(uniqueKeysWithValues: OrderType.allCases.map { ($0.rawValue, JSONValue.integer(Int64(count($0)))) }))
            }
            answer(Reply.success(id: request.id, data: ["open": perType { stats.open[$0] ?? 0 },
                                                        "runners_online": perType { stats.runnersOnline[$0]?.count ?? 0 }]))
        }
    }
}
