// `admin.list_feedback` on a node whose accounts several pairs hold: one list, newest first, across
// the account partitions, paged by `before` as on one node. Entries are named by their cluster ids
// and ordered by (submitted_at, id) (FeedbackQuery.swift): the entry `before` names is timed by its
// own partition, then every partition gives its `limit + 1` newest after it, and the newest `limit`
// of them all are the page, the last one's id its `next_before` when more remain.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import PartitionOwner

extension PairAdministration {
    package func listFeedback(_ command: RoutedRequest, completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        let id = command.id
        let before: UInt64?
        let limit: Int
        do throws(DomainError) {
            (before, limit) = try AdminOperations.feedbackPage(try Arguments(command.data))
        } catch {
            return completion(.reply(Reply.failure(id: id, error: error)))
        }
        guard let before else { return listFeedback(command, after: nil, limit: limit, completion: completion) }
        guard let named = FeedbackQuery.entry(named: before, partitions: UInt64(map.partitionCount)) else {
            // Below every cluster id: nothing comes after it.
            return completion(.reply(Reply.success(id: id, data: ["feedback": []])))
        }
        let question = RoutedRequest(id: id, operation: FeedbackQuery.at, data: ["id": .integer(Int64(before))], actor: command.actor)
        router.route(question, to: PartitionID(space: .accounts, index: Int(named.partition))) { outcome in
            guard case .reply(let bytes) = outcome, case .integer(let at)? = Reply.data(of: bytes)?["submitted_at"] else {
                return completion(outcome)
            }
            listFeedback(command, after: (at, before), limit: limit, completion: completion)
        }
    }

    private func listFeedback(_ command: RoutedRequest, after cursor: (at: Int64, id: UInt64)?, limit: Int,
                              completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        var data: [String: JSONValue] = ["limit": .integer(Int64(limit + 1))]
        if let cursor {
            data["before"] = .integer(Int64(cursor.id))
            data["before_at"] = .integer(cursor.at)
        }
        let part = RoutedRequest(id: command.id, operation: FeedbackQuery.page, data: .object(data), actor: command.actor)
        gather(part, completion: completion) { parts in Self.mergeFeedback(parts, limit: limit) }
    }

    /// The page from every partition's `limit + 1` newest.
    static func mergeFeedback(_ parts: [[String: JSONValue]], limit: Int) -> JSONValue {
        let entries = items("feedback", of: parts).sorted {
            (integer($0["submitted_at"]), integer($0["id"])) > (integer($1["submitted_at"]), integer($1["id"]))
        }
        var page: [String: JSONValue] = ["feedback": .array(Array(entries.prefix(limit)))]
        if entries.count > limit, case .integer(let last)? = entries[limit - 1]["id"] { page["next_before"] = .integer(last) }
        return .object(page)
    }
}
