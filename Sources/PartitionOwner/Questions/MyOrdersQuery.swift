// A node's questions to every board partition's owner for a user's own orders when several pairs
// hold them: each owner answers from its shards only, with the orders themselves (the storage's
// encoding) or the runner's takings on them; the node adds what its own archive holds, which
// follows every pair's closed orders (`BB_H0`), and merges them as one node merges its shards and
// its archive (PairHistoryReads.swift, History.swift). Not client operations: only nodes reach
// `bb.req.p<n>`, with the user as the actor.
//   {"data": {"role": "published", "scope": "all", "limit": 50, "cursor": "…"}, "op": "node.live_orders", "actor": …}
//   {"op": "node.live_earnings", "actor": …}
import BangbangApplication
import BangbangCore
import BangbangProtocol
import BangbangStorage
import Foundation
import InboxProtocol

package enum LiveOrdersQuery {
    package static let operation = "node.live_orders"

    /// The actor's first `limit + 1` orders in the role and scope after the cursor, newest first,
    /// each as the storage encodes it (BoardListAnswer's entries: creation time, id, order).
    package static func answer(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        guard let user = RoutedOperations.askingActor(request, app: app, answer: answer) else { return }
        let query: MyOrdersOperations.MineQuery
        do throws(DomainError) {
            query = try MyOrdersOperations.MineQuery(try Arguments(request.data))
        } catch {
            app.metrics.requests.increment(label: "routed:\(error.code.rawValue)")
            return answer(Reply.failure(id: request.id, error: error))
        }
        let indices = query.role == .joined ? Array(app.layout.shards(of: .group)) : Array(0..<app.shards.count)
        OrderOperations.gather(over: indices, app: app, {
            $0.orderRecords(of: user, role: query.role, scope: query.scope, after: query.cursor, limit: query.limit + 1)
        }) { parts in
            let entries = parts.joined().map {
                BoardListAnswer.Entry(key: $0.createdAt.milliseconds, id: $0.id.rawValue, order: StoredOrder.encoded($0))
            }
            answer(BoardListAnswer.encode(BoardListAnswer.Answer(sequences: [:], total: UInt32(clamping: entries.count),
                                                                 hasMore: false, entries: entries)))
        }
    }
}

/// What one board partition's shards say of a runner's takings: the summary, and the closed orders
/// they still hold (which the archive may hold too: the node leaves those out of its totals).
package struct LiveEarnings: Codable, Sendable, Equatable {
    package var earnings: RunnerEarnings
    package var closed: [UInt64]
}

package enum LiveEarningsQuery {
    package static let operation = "node.live_earnings"

    package static func answer(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        guard let runner = RoutedOperations.askingActor(request, app: app, answer: answer) else { return }
        guard request.data == nil || request.data == .object([:]) else {
            app.metrics.requests.increment(label: "routed:bad_request")
            return answer(Reply.failure(id: request.id, error: DomainError(.badRequest, "\"\(operation)\" takes no data", field: "data")))
        }
        OrderOperations.gather(over: Array(0..<app.shards.count), app: app, {
            ($0.earnings(of: runner), $0.closedOrderIDs(ranBy: runner))
        }) { parts in
            let live = LiveEarnings(earnings: parts.map(\.0).reduce(RunnerEarnings(), +),
                                    closed: parts.flatMap(\.1).map(\.rawValue).sorted())
            answer((try? JSONEncoder().encode(live)).map { Array($0) } ?? [])
        }
    }
}
