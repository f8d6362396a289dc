// A user's own orders and a runner's takings on a node whose boards several pairs hold:
// `orders.mine` and `runner.earnings` read the orders still on the shards from every board
// partition's owner (`node.live_orders`, `node.live_earnings`), then the closed ones from this
// node's own archive, which follows every pair's history (`BB_H0`), and merge them as one node
// merges its shards and its archive (History.swift): an order in both is the copy with the higher
// revision, and totals leave out the archived copy of an order a shard still holds. Order of reads
// as there: the shards first, then the archive, brought up to the history stream's end first, so an
// order moved out of a shard between the two reads is found.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import BangbangStorage
import Cluster
import Dispatch
import Foundation
import InboxProtocol
import OrderArchive
import PartitionOwner

package struct PairHistoryReads: Sendable {
    /// Asks each partition, in the process when this node serves it.
    let router: NodeRouter
    /// Every board partition.
    let partitions: [PartitionID]
    /// The node's archive and its following of the history stream.
    let follower: HistoryFollower
    /// Archive reads run here, never on a connection's loop.
    let queue = DispatchQueue(label: "bangbang.node-history", qos: .userInitiated, attributes: .concurrent)

    /// `orders.mine`'s reply for `id`, for `user`.
    package func mine(id: JSONValue, user: UserID, query: MyOrdersOperations.MineQuery, data: JSONValue?,
              completion: @escaping @Sendable ([UInt8]) -> Void) {
        let payload = RoutedRequest(id: id, operation: LiveOrdersQuery.operation, data: data,
                                    actor: RoutedActor(user: user, isApprovedRunner: false)).encoded()
        gather(payload, id: id, completion: completion, read: { (bytes: [UInt8]) throws(DomainError) -> [OrderView]? in
            guard let answer = BoardListAnswer.decode(bytes[...]) else { return nil }
            return try answer.entries.map { entry throws(DomainError) in
                do { return OrderView(try StoredOrder.decode(entry.order), viewer: user) } catch {
                    throw DomainError(.internalError, "a partition's order \(entry.id) cannot be read")
                }
            }
        }) { [follower] (parts: [[OrderView]], finish) in
            guard History.reachesArchive(query.scope) else {
                return finish(.success(BoardWire.encode(MyOrdersPage.merge(parts, limit: query.limit))))
            }
            let archived = try await Self.read(follower) { archive throws(ArchiveError) in
                try archive.orders(of: History.archiveID(user), as: History.archiveRole(query.role),
                                   before: History.archiveCursor(query.cursor), limit: query.limit + 1)
            }
            finish(Result { () throws(DomainError) in
                BoardWire.encode(try History.page(live: parts, archived: archived, viewer: user, scope: query.scope, limit: query.limit))
            })
        }
    }

    /// `runner.earnings`' reply for `id`, for `runner`.
    package func earnings(id: JSONValue, runner: UserID, completion: @escaping @Sendable ([UInt8]) -> Void) {
        let payload = RoutedRequest(id: id, operation: LiveEarningsQuery.operation, data: nil,
                                    actor: RoutedActor(user: runner, isApprovedRunner: false)).encoded()
        gather(payload, id: id, completion: completion, read: { (bytes: [UInt8]) throws(DomainError) -> LiveEarnings? in
            try? JSONDecoder().decode(LiveEarnings.self, from: Data(bytes))
        }) { [follower] parts, finish in
            let live = Set(parts.flatMap(\.closed).map(String.init))
            let archived = try await Self.read(follower) { archive throws(ArchiveError) in
                try archive.runnerTotals(of: History.archiveID(runner), excluding: live)
            }
            finish(.success(BoardWire.encode(History.earnings(live: parts.map(\.earnings), archived: archived))))
        }
    }

    /// Sends `payload` to every board partition; each answer is `read` (nil: it is a refusal,
    /// the client's reply as it stands); once all are in, `merge` makes the reply's data. A part
    /// that cannot be had fails the read with `storage_unavailable`: nothing was changed.
    private func gather<Part: Sendable>(_ payload: [UInt8], id: JSONValue, completion: @escaping @Sendable ([UInt8]) -> Void,
                                        read: @escaping @Sendable ([UInt8]) throws(DomainError) -> Part?,
                                        merge: @escaping @Sendable ([Part], _ finish: @escaping @Sendable (Result<JSONValue, DomainError>) -> Void) async throws -> Void) {
        let gathered = PartitionGather<Part, [UInt8]>(expected: partitions.count)
        for partition in partitions {
            router.ask(partition, payload: payload) { result in
                let outcome: PartitionGather<Part, [UInt8]>.Outcome
                switch result {
                case .failure(let failure):
                    outcome = gathered.refuse(BoardReads.unavailable(id: id, failure))
                case .success(let bytes):
                    do throws(DomainError) {
                        outcome = try read(bytes).map(gathered.add) ?? gathered.refuse(bytes)
                    } catch {
                        outcome = gathered.refuse(Reply.failure(id: id, error: error))
                    }
                }
                switch outcome {
                case .waiting: break
                case .refused(let reply): completion(reply)
                case .complete(let parts):
                    Task {
                        do {
                            try await merge(parts) { result in
                                switch result {
                                case .success(let data): completion(Reply.success(id: id, data: data))
                                case .failure(let error): completion(Reply.failure(id: id, error: error))
                                }
                            }
                        } catch {
                            completion(Reply.failure(id: id, error: DomainError(.storageUnavailable,
                                "order history cannot be read right now (\(error)); try again")))
                        }
                    }
                }
            }
        }
    }

    /// Brings the archive up to the history stream's end, then runs `body` on it off the loops.
    private static func read<Value: Sendable>(_ follower: HistoryFollower,
                                              _ body: @escaping @Sendable (OrderArchive) throws(ArchiveError) -> Value) async throws -> Value {
        try await follower.catchUp()
        let archive = follower.archive
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                do throws(ArchiveError) { continuation.resume(returning: try body(archive)) } catch { continuation.resume(throwing: error) }
            }
        }
    }
}
