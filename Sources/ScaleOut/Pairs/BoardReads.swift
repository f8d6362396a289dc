// The reads of every board at once on a node whose boards several partitions hold: `board.list` of
// every campus, walked over the partitions' parts by cursor (BoardListWalk), and `board.stats`, the
// partitions' open orders summed with the runners online. A `board.list` of one campus is not read
// here: that campus's partition holds it whole and the request is routed there. Each part is asked
// with the client's request id, so a part's refusal is the client's reply as it stands. A part that
// cannot be had fails the read with `storage_unavailable`: a read changed nothing, so the client
// may simply ask again.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import InboxProtocol
import JSON
import PartitionOwner
import Synchronization

package struct BoardReads: Sendable {
    /// Asks each partition, in the process when this node serves it.
    let router: NodeRouter
    /// Every board partition, in index order.
    let partitions: [PartitionID]

    /// `board.list`'s reply for `id`: `data` is the client's (checked: `query` is what it says).
    package func list(id: JSONValue, data: JSONValue?, query: OrderListQuery, completion: @escaping @Sendable ([UInt8]) -> Void) {
        let members: [String: JSONValue] = if case .object(let members)? = data { members } else { [:] }
        let read = ListRead(walk: BoardListWalk(query: query, partCount: partitions.count), completion: completion)
        @Sendable func send(_ asks: [BoardListWalk.Ask]) {
            for ask in asks {
                let payload = RoutedRequest(id: id, operation: BoardListQuery.operation,
                                            data: Self.partData(members, query: query, ask: ask), actor: nil).encoded()
                router.ask(partitions[ask.part], payload: payload) { result in
                    let bytes: [UInt8]
                    switch result {
                    case .failure(let failure): return read.finish(Self.unavailable(id: id, failure))
                    case .success(let answer): bytes = answer
                    }
                    guard let answer = BoardListAnswer.decode(bytes[...]) else { return read.finish(bytes) }
                    switch read.receive(answer, from: ask.part) {
                    case .wait, nil: break
                    case .ask(let more): send(more)
                    case .done(let merged): read.finish(Reply.success(id: id, encodedData: BoardListing.listData(merged)))
                    }
                }
            }
        }
        send(read.start())
    }

    /// One `board.list` in progress: its walk, answered from whichever thread an answer comes on.
    private final class ListRead: Sendable {
        private let state: Mutex<(walk: BoardListWalk, isOver: Bool)>
        private let completion: @Sendable ([UInt8]) -> Void

        init(walk: BoardListWalk, completion: @escaping @Sendable ([UInt8]) -> Void) {
            state = Mutex((walk, false))
            self.completion = completion
        }

        package func start() -> [BoardListWalk.Ask] { state.withLock { $0.walk.start() } }

        /// The walk's next step; nil once the read is over (a part failed it).
        package func receive(_ answer: BoardListAnswer.Answer, from part: Int) -> BoardListWalk.Step? {
            state.withLock { $0.isOver ? nil : $0.walk.receive(answer, from: part) }
        }

        /// The reply, once: later calls (other parts' failures) are dropped.
        package func finish(_ reply: [UInt8]) {
            let isFirst = state.withLock { state in
                defer { state.isOver = true }
                return !state.isOver
            }
            if isFirst { completion(reply) }
        }
    }

    /// `board.stats`' reply for `id`: every partition's open orders summed; the runners online as
    /// the owner that counts the most sees them (every owner hears every node's report, and one
    /// that serves clients itself adds its own: RunnersOnline.swift).
    package func stats(id: JSONValue, completion: @escaping @Sendable ([UInt8]) -> Void) {
        let gathered = PartitionGather<BoardCounts, [UInt8]>(expected: partitions.count)
        let payload = RoutedRequest(id: id, operation: BoardCountsQuery.operation, data: nil, actor: nil).encoded()
        for partition in partitions {
            router.ask(partition, payload: payload) { result in
                let outcome = switch result {
                case .failure(let failure): gathered.refuse(Self.unavailable(id: id, failure))
                case .success(let bytes): BoardCounts(reply: bytes).map(gathered.add) ?? gathered.refuse(bytes)
                }
                switch outcome {
                case .waiting: break
                case .refused(let reply): completion(reply)
                case .complete(let counts): completion(Reply.success(id: id, data: BoardCounts.statsData(counts)))
                }
            }
        }
    }

    /// A part's question: the client's filter and sort, every type named when it named none, and
    /// the walk's cursor and limit for the part.
    static func partData(_ members: [String: JSONValue], query: OrderListQuery, ask: BoardListWalk.Ask) -> JSONValue {
        var data = members
        data["offset"] = nil
        if data["types"] == nil {
            data["types"] = .array(query.filter.types.map(\.rawValue).sorted().map(JSONValue.string))
        }
        data["limit"] = .integer(Int64(ask.limit))
        data["cursor"] = ask.cursor.map { .string($0.token) }
        return .object(data)
    }

    static func unavailable(id: JSONValue, _ failure: RouteFailure) -> [UInt8] {
        Reply.failure(id: id, error: DomainError(.storageUnavailable,
            "part of the boards could not be read (\(failure)); nothing was changed, try again shortly"))
    }
}

/// One board partition's `node.board_counts` answer.
package struct BoardCounts: Sendable, Equatable {
    var open: [OrderType: Int]
    package var runnersOnline: [OrderType: Int]

    init(open: [OrderType: Int], runnersOnline: [OrderType: Int]) {
        self.open = open
        self.runnersOnline = runnersOnline
    }

    /// Nil for anything but a successful answer with both counts.
    init?(reply bytes: [UInt8]) {
        guard let data = Reply.data(of: bytes), let open = Self.perType(data["open"]), let runners = Self.perType(data["runners_online"]) else { return nil }
        self.init(open: open, runnersOnline: runners)
    }

    private static func perType(_ value: JSONValue?) -> [OrderType: Int]? {
        guard case .object(let members)? = value else { return nil }
        var counts: [OrderType: Int] = [:]
        for (name, count) in members {
            guard let type = OrderType(rawValue: name), case .integer(let number) = count, number >= 0 else { return nil }
            counts[type] = Int(number)
        }
        return counts
    }

    /// `board.stats`' data from every partition's counts.
    static func statsData(_ parts: [BoardCounts]) -> JSONValue {
        var types: [String: JSONValue] = [:]
        for type in OrderType.allCases {
            let open = parts.reduce(0) { $0 + ($1.open[type] ?? 0) }
            let runners = parts.map { $0.runnersOnline[type] ?? 0 }.max() ?? 0
            types[type.rawValue] = ["open": .integer(Int64(open)), "runners_online": .integer(Int64(runners))]
        }
        return ["types": .object(types)]
    }
}
