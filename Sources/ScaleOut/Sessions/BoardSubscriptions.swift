// `board.subscribe` on a node whose boards other nodes' partitions hold. The watcher starts
// following the boards first; the node's position on each board is then the reply's `seq`; every
// board partition is asked its part of the listing (`node.board_list`), and what the node forwards
// meanwhile is held per board (`FeedSubscription`). Once every part is in, the merged listing is
// the reply, and the held changes no part reflected follow it in order, then the live ones. Nothing
// reaches the watcher before its reply, and nothing a part already reflects reaches it at all. A
// part's answer and the changes its owner published before it come over one connection in order, so
// once the reply is out no change a part reflects can still arrive: a settled subscription filters
// only by its filter.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import Dispatch
import InboxProtocol
import NATSClient
import PartitionOwner

extension FollowedBoards {
    package struct Subscriber: Sendable {
        /// The reply's data (`orders`, `seq`, `total`), or why there is none; on `queue`, once.
        package let reply: @Sendable (Result<[UInt8], SubscriptionFailure>) -> Void
        /// The watcher's changes after its reply, in order of each board's `seq`; on `queue`.
        let deliver: @Sendable (FeedBroadcast) -> Void
    }

    package enum SubscriptionFailure: Error, Sendable, Equatable {
        /// A partition's part could not be had (no owner within the bound, or no answer).
        case route(RouteFailure)
        /// A partition refused the question (its reply, which names why).
        case refused(PartitionID, reply: String)
        /// The node could not subscribe to a board's changes (its NATS connection is closed).
        case unwatchable(NATSClientError)
    }

    package struct BoardSubscription {
        let query: OrderListQuery
        let subscriber: Subscriber
        var boards: [OrderType: FeedSubscription<FeedBroadcast>]
        /// The partitions' parts until every one is in and the reply is made of them.
        var parts: [BoardListAnswer.Answer] = []

        /// Every partition's part is in (each answers once), so the reply is out.
        var isReplied: Bool { boards.values.allSatisfy(\.isReady) }
    }

    /// Starts a subscription for a watcher here, to the boards of `data` (a `board.subscribe`'s
    /// data, checked by the caller: `BoardOperations.subscriptionQuery`), held by `partitions`.
    /// On `queue`; returns its handle, for `unsubscribe`.
    package func subscribe(_ data: JSONValue?, query: OrderListQuery, partitions: [PartitionID], requests: PartitionRequests,
                   subscriber: Subscriber) -> UInt64 {
        dispatchPrecondition(condition: .onQueue(queue))
        precondition(!partitions.isEmpty, "a board is held by at least one partition")
        let id = nextSubscription
        nextSubscription += 1
        let types = query.filter.types.sorted { $0.rawValue < $1.rawValue }
        var watched: [OrderType] = []
        for type in types {
            do throws(NATSClientError) {
                try watch(type)
                watched.append(type)
            } catch {
                for type in watched { unwatch(type) }
                subscriber.reply(.failure(.unwatchable(error)))
                return id
            }
        }
        let indices = partitions.map { UInt16($0.index) }
        subscriptions[id] = BoardSubscription(query: query, subscriber: subscriber, boards: Dictionary(uniqueKeysWithValues: types.map {
            ($0, FeedSubscription(partitions: indices, at: position(of: $0)))
        }))
        let payload = RoutedRequest(id: .integer(1), operation: BoardListQuery.operation, data: data, actor: nil).encoded()
        for partition in partitions {
            let queue = queue
            Task {
                let result = await requests.request(partition, payload: payload)
                queue.async { [weak self] in self?.listed(id, by: partition, result) }
            }
        }
        return id
    }

    /// The watcher left (or its connection closed). On `queue`, any number of times.
    package func unsubscribe(_ id: UInt64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        for type in subscription.boards.keys { unwatch(type) }
    }

    /// A forwarded change, for the subscriptions whose filter it concerns. A settled subscription
    /// (nearly all) is read, never written: nothing is copied per watcher. The few still settling
    /// are changed after the walk, so the walk never holds the table while it is written.
    func offer(_ broadcast: FeedBroadcast, from partition: UInt16, partitionSequence: UInt64) {
        let type = broadcast.after.details.type
        for (id, subscription) in subscriptions {
            guard let board = subscription.boards[type],
                  subscription.query.filter.change(before: broadcast.before, after: broadcast.after) != nil else { continue }
            if board.isSettled {
                subscription.subscriber.deliver(broadcast)
            } else {
                settling.append(id)
            }
        }
        for id in settling {
            guard subscriptions[id]?.boards[type]?.receive(broadcast, from: partition, partitionSequence: partitionSequence) == true,
                  let subscription = subscriptions[id] else { continue }
            subscription.subscriber.deliver(broadcast)
        }
        settling.removeAll(keepingCapacity: true)
    }

    private func listed(_ id: UInt64, by partition: PartitionID, _ result: Result<[UInt8], RouteFailure>) {
        guard var subscription = subscriptions[id], !subscription.isReplied else { return }
        let answer: BoardListAnswer.Answer
        switch result {
        case .failure(let failure):
            return fail(id, .route(failure))
        case .success(let bytes):
            guard let decoded = BoardListAnswer.decode(bytes[...]) else {
                return fail(id, .refused(partition, reply: String(decoding: bytes.prefix(300), as: UTF8.self)))
            }
            answer = decoded
        }
        // Each board's held changes, in board order; only changes the filter concerns were held (`offer`).
        var released: [FeedBroadcast] = []
        for type in subscription.boards.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            released += subscription.boards[type]!.listed(partition: UInt16(partition.index),
                                                          through: answer.sequences[type.rawValue] ?? 0)
        }
        subscription.parts.append(answer)
        let parts = subscription.parts
        if subscription.isReplied { subscription.parts = [] }
        subscriptions[id] = subscription
        guard subscription.isReplied else { return }
        let merged = BoardListing.merge(parts, query: subscription.query)
        subscription.subscriber.reply(.success(BoardListing.subscriptionData(merged,
                                                                              sequences: subscription.boards.mapValues(\.replySequence))))
        for event in released { subscription.subscriber.deliver(event) }
    }

    private func fail(_ id: UInt64, _ failure: SubscriptionFailure) {
        guard let subscription = subscriptions[id] else { return }
        unsubscribe(id)
        subscription.subscriber.reply(.failure(failure))
    }
}
