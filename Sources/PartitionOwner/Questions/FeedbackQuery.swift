// The feedback list of a cluster split into several pairs, each account partition's part
// (PairAdministration.swift). A partition numbers its own feedback 1, 2, 3…; across the cluster an
// entry is named by its cluster id, `n·P + k` for the n-th entry of partition k of P (on one
// partition, its own number), and the list runs newest first by (submitted_at, cluster id). Paging
// by `before`, a cluster id, needs that entry's time, which only its own partition knows: the node
// asks it first (`node.feedback_at`), then every partition for its entries before that point
// (`node.feedback_page`), and merges. A page sorts the partition's entries (feedback is a short
// list, read by an operator now and then). Not client operations: only nodes reach `bb.req.a<n>`,
// with an administrator vouched for as the actor.
//   {"data": {"limit": 21, "before": 37, "before_at": 1796598718910}, "op": "node.feedback_page", "actor": …}
//   {"data": {"id": 37}, "op": "node.feedback_at", "actor": …}
import BangbangApplication
import BangbangCore
import BangbangProtocol

package enum FeedbackQuery {
    package static let page = "node.feedback_page"
    package static let at = "node.feedback_at"

    /// The cluster id of the `number`-th entry of partition `partition` of `partitions`.
    static func clusterID(number: UInt64, partition: UInt64, partitions: UInt64) -> UInt64 { number * partitions + partition }

    /// The partition and number a cluster id names; nil for one that names no entry (number 0).
    package static func entry(named clusterID: UInt64, partitions: UInt64) -> (partition: UInt64, number: UInt64)? {
        let number = clusterID / partitions
        return number > 0 ? (clusterID % partitions, number) : nil
    }

    /// Whether `entry` comes after the cursor in the list, newest first.
    static func isAfter(_ entry: (at: Int64, id: UInt64), cursor: (at: Int64, id: UInt64)) -> Bool {
        (entry.at, entry.id) < (cursor.at, cursor.id)
    }

    /// `node.feedback_page`: this partition's `limit` newest entries after the cursor (none: from
    /// the newest), under their cluster ids.
    static func answerPage(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let limit: Int
        let cursor: (at: Int64, id: UInt64)?
        do throws(DomainError) {
            try requireVouched(request)
            let arguments = try Arguments(request.data)
            try arguments.allowOnly(["before", "before_at", "limit"])
            limit = Int(try arguments.integer("limit", in: 1...101))
            let before = try arguments.optionalInteger("before", in: 1...Int64.max)
            let beforeAt = try arguments.optionalInteger("before_at")
            guard (before == nil) == (beforeAt == nil) else {
                throw DomainError(.invalidField, "\"before\" and \"before_at\" come together", field: "before")
            }
            cursor = before.flatMap { id in beforeAt.map { ($0, UInt64(id)) } }
        } catch {
            return refuse(request, error, app: app, answer: answer)
        }
        let space = app.orderSerials
        app.accounts.perform { owner in
            var entries: [FeedbackEntry] = []
            for var entry in owner.store.state.feedback {
                entry.id = clusterID(number: entry.id, partition: space.partition, partitions: space.partitions)
                if let cursor, !isAfter((entry.submittedAt.rawValue, entry.id), cursor: cursor) { continue }
                entries.append(entry)
            }
            entries.sort { ($0.submittedAt.rawValue, $0.id) > ($1.submittedAt.rawValue, $1.id) }
            answer(Reply.success(id: request.id, data: ["feedback": .array(entries.prefix(limit).map(FeedbackWire.encode))]))
        }
    }

    /// `node.feedback_at`: when the entry with this cluster id, one of this partition's, was
    /// submitted; `invalid_field` on `before` (the client's field) when there is none.
    static func answerAt(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        let id: UInt64
        do throws(DomainError) {
            try requireVouched(request)
            let arguments = try Arguments(request.data)
            try arguments.allowOnly(["id"])
            id = UInt64(try arguments.integer("id", in: 1...Int64.max))
        } catch {
            return refuse(request, error, app: app, answer: answer)
        }
        let space = app.orderSerials
        app.accounts.perform { owner in
            let feedback = owner.store.state.feedback
            guard let named = entry(named: id, partitions: space.partitions), named.partition == space.partition,
                  named.number <= UInt64(feedback.count) else {
                return answer(Reply.failure(id: request.id, error: DomainError(.invalidField,
                    "no feedback has the id \(id): \"before\" is the \"next_before\" of a page", field: "before")))
            }
            answer(Reply.success(id: request.id, data: ["submitted_at": .integer(feedback[Int(named.number) - 1].submittedAt.rawValue)]))
        }
    }

    private static func requireVouched(_ request: RoutedRequest) throws(DomainError) {
        guard request.actor?.isVouchedAdministrator == true else {
            throw DomainError(.forbidden, "\"\(request.operation)\" is asked for an administrator vouched for by their own partition")
        }
    }

    private static func refuse(_ request: RoutedRequest, _ error: DomainError, app: Application, answer: @Sendable ([UInt8]) -> Void) {
        app.metrics.requests.increment(label: "routed:\(error.code.rawValue)")
        answer(Reply.failure(id: request.id, error: error))
    }
}
