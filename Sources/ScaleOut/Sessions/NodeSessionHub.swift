// What every node session of a node shares: the route to the partitions' owners, the node's
// following of personal streams and of boards, each loop's outbox, and which session watches which
// boards. One hub per node, made when the node is on NATS and runs its clients' sessions itself
// (`--cluster-sessions node`) rather than relaying them to the owner.
//
// The board watches live on the followed boards' queue, where its changes arrive: a session's
// `board.subscribe` replaces its previous watch there, and a board whose changes were lost closes
// the connections watching it with 1012 (they reconnect and subscribe again, as after a restart).
// Each second the approved runners among the watchers are reported on `bb.node.<id>.watching`,
// for the owner's `board.stats` (RunnersOnline.swift).
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import Dispatch
import NATSClient
import PartitionOwner
import SocketServer
import Synchronization
import WebSocketProtocol
import WebSocketServer

package final class NodeSessionHub: Sendable {
    let router: NodeRouter
    let map: PartitionMap
    /// The reads of every board at once, merged here when several partitions hold the boards;
    /// nil while one does, which answers them whole.
    let boardReads: BoardReads?
    /// A user's orders and a runner's takings, merged here with the node's archive when several
    /// partitions hold the boards; nil while one does.
    let historyReads: PairHistoryReads?
    /// Administration across account partitions when several pairs hold the accounts; nil while one does.
    let administration: PairAdministration?
    /// Phone changes and logins by phone across account partitions when several pairs hold them; nil while one does.
    let phoneMoves: PhoneMoves?
    package let streams: FollowedStreams
    let boards: FollowedBoards
    /// `info.get`'s data, the same as the owner's: made from the same configuration.
    let info: [UInt8]
    /// Requests a connection may send per second (`--requests-per-second`); 0: no limit.
    let requestsPerSecond: Int
    /// Requests a user may send per second over their connections here (`--user-requests-per-second`).
    package let userLimiter: KeyedRateLimiter<UserID>
    package let metrics: ServerMetrics
    package let logger: Logger
    private let watches: Watches
    private let outboxes = Mutex<[Int: NodeOutbox]>([:])
    private let connection: NATSConnection
    private let nodeID: String
    /// Where this node's admin secret is.
    private let dataDirectory: String

    /// `history`: the node's archive and its following of the history stream.
    /// `local`: the partitions this node owns, whose requests its sessions run in the process.
    init(connection: NATSConnection, nodeID: String, map: PartitionMap, configuration: ServerConfiguration,
         metrics: ServerMetrics, logger: Logger, history: HistoryFollower? = nil, local: LocalOwners? = nil) {
        self.connection = connection
        self.nodeID = nodeID
        dataDirectory = configuration.dataDirectory
        let requests = PartitionRequests(connection: connection)
        router = NodeRouter(requests: requests, local: local)
        self.map = map
        let boardPartitions = map.allPartitions.filter { $0.space == .boards }
        boardReads = boardPartitions.count > 1 ? BoardReads(router: router, partitions: boardPartitions) : nil
        administration = map.partitionCount > 1 ? PairAdministration(router: router, map: map) : nil
        phoneMoves = map.partitionCount > 1 ? PhoneMoves(router: router, map: map, logger: logger) : nil
        historyReads = boardPartitions.count > 1
            ? history.map { [router] in PairHistoryReads(router: router, partitions: boardPartitions, follower: $0) } : nil
        streams = FollowedStreams(connection: connection, requests: requests, map: map, metrics: metrics.relay, logger: logger)
        let watches = Watches()
        self.watches = watches
        // Every change forwarded reaches the settled subscriptions through their own subscriber
        // (`FollowedBoards.offer`); the board-wide sink only hears of gaps.
        boards = FollowedBoards(connection: connection, metrics: metrics.relay, logger: logger, sink: FollowedBoards.Sink(
            deliver: { _ in },
            gap: { type, _ in watches.closeWatchers(of: type) }))
        watches.boards = boards
        watches.queue = boards.queue
        info = JSONWriter.encode(InfoOperations.data(configuration: configuration, rules: Application.orderRules(from: configuration)))
        requestsPerSecond = configuration.requestsPerSecond
        userLimiter = KeyedRateLimiter(ratePerSecond: configuration.userRequestsPerSecond, capacity: configuration.userRequestsPerSecond * 2)
        self.metrics = metrics
        self.logger = logger
    }

    /// `auth.admin_secret`'s reply, for a connection from loopback: the secret this node wrote to
    /// its data directory at start (AdminSecret.swift), read off the loops, compared in constant
    /// time, never logged.
    func checkAdminSecret(_ candidate: String, id: JSONValue, connectionID: UInt64,
                          completion: @escaping @Sendable (NodeRouter.Outcome) -> Void) {
        AdminSecretLogin.check(candidate, dataDirectory: dataDirectory, connectionID: connectionID, metrics: metrics,
                               logger: logger) { result in
            switch result {
            case .success: completion(.reply(Reply.success(id: id, data: AdminSecretLogin.loggedIn)))
            case .failure(let error): completion(.reply(Reply.failure(id: id, error: error)))
            }
        }
    }

    package func start() throws(NATSClientError) {
        try streams.start()
        let timer = DispatchSource.makeTimerSource(queue: boards.queue)
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        timer.setEventHandler { [weak self] in self?.report() }
        boards.queue.sync { watches.reportTimer = timer }
        timer.resume()
    }

    func stop() {
        streams.stop()
        boards.queue.sync {
            watches.reportTimer?.cancel()
            watches.reportTimer = nil
            watches.removeAll()
        }
    }

    /// On the boards' queue: who watches here, published for the owners. A report that cannot be
    /// published is made again a second later; the owner forgets this node after five silent ones.
    private func report() {
        let report = WatchingReport(node: nodeID, watching: watches.runnersWatching(),
                                    connections: metrics.relay.nodeSessions.current, users: streams.usersFollowed)
        try? connection.publish(WatchingSubjects.subject(of: nodeID), payload: report.encoded())
    }

    /// Whether `session`'s user is an approved runner now (`runner`, or nil): counted in the
    /// reports while it watches.
    func noteRunner(_ session: NodeSession, _ runner: UserID?) {
        let watches = watches
        boards.queue.async { watches.setRunner(runner, of: session) }
    }

    /// A session for a client connected on `loop`.
    func makeSession(on loop: EventLoop) -> NodeSession {
        NodeSession(hub: self, outbox: outbox(for: loop))
    }

    private func outbox(for loop: EventLoop) -> NodeOutbox {
        outboxes.withLock { table in
            if let outbox = table[loop.index] { return outbox }
            let made = NodeOutbox(loop: loop)
            table[loop.index] = made
            return made
        }
    }

    /// Starts `session`'s watch of the boards `query` names (replacing any it had): its reply
    /// (`board.subscribe`'s, for `requestID`) and then its changes are posted to its outbox.
    func watch(for session: NodeSession, requestID: JSONValue, data: JSONValue?, query: OrderListQuery, runner: UserID?,
               pending: NodeSession.Pending) {
        let (boards, watches, map, requests) = (boards, watches, map, router.requests)
        boards.queue.async {
            watches.remove(session)
            let outbox = session.outbox
            let filter = query.filter
            let id = boards.subscribe(data, query: query, partitions: map.allPartitions.filter { $0.space == .boards },
                                      requests: requests, subscriber: FollowedBoards.Subscriber(
                reply: { result in
                    watches.flush()
                    switch result {
                    case .success(let data):
                        outbox.post(.reply(Reply.success(id: requestID, encodedData: data), pending), to: session)
                    case .failure(let failure):
                        watches.remove(session)
                        outbox.post(.reply(Reply.failure(id: requestID, error: DomainError(.storageUnavailable,
                            "the boards could not be listed (\(failure)); nothing is watched, try again shortly")), pending), to: session)
                    }
                },
                deliver: { broadcast in
                    guard let kind = filter.change(before: broadcast.before, after: broadcast.after) else { return }
                    watches.push(broadcast.message(for: kind), to: session)
                }))
            // A subscription that failed at once (its reply posted already) holds nothing.
            if boards.subscriptions[id] != nil { watches.add(session, subscription: id, types: filter.types, runner: runner) }
        }
    }

    /// Ends `session`'s watch, then posts `reply` (if any) behind the changes already posted.
    func unwatch(_ session: NodeSession, reply: (bytes: [UInt8], pending: NodeSession.Pending)? = nil) {
        let watches = watches
        boards.queue.async {
            watches.remove(session)
            watches.flush()
            if let reply { session.outbox.post(.reply(reply.bytes, reply.pending), to: session) }
        }
    }

    /// The sessions watching boards, by the subscription each holds. Confined to the followed
    /// boards' queue.
    private final class Watches: @unchecked Sendable {
        // Confinement: every member is touched only on `boards.queue` (set once, before any use).
        var boards: FollowedBoards?
        var queue: DispatchQueue?
        var reportTimer: DispatchSourceTimer?
        /// The feed messages for each loop's sessions since the last flush: posted to each outbox
        /// under one lock, once the NATS message that caused them has been offered to every
        /// subscription, instead of once per recipient. Kept for their capacity.
        private var feed: [Int: (outbox: NodeOutbox, messages: [(NodeSession, SharedMessage)])] = [:]
        private var isFlushScheduled = false
        private struct Entry {
            package let session: NodeSession
            let subscription: UInt64
            let types: Set<OrderType>
            /// The watcher's user while an approved runner.
            var runner: UserID?
        }

        private var bySession: [ObjectIdentifier: Entry] = [:]

        package func add(_ session: NodeSession, subscription: UInt64, types: Set<OrderType>, runner: UserID?) {
            bySession[ObjectIdentifier(session)] = Entry(session: session, subscription: subscription, types: types, runner: runner)
        }

        func setRunner(_ runner: UserID?, of session: NodeSession) {
            bySession[ObjectIdentifier(session)]?.runner = runner
        }

        func runnersWatching() -> [OrderType: Set<UserID>] {
            var watching: [OrderType: Set<UserID>] = [:]
            for entry in bySession.values {
                guard let runner = entry.runner else { continue }
                for type in entry.types { watching[type, default: []].insert(runner) }
            }
            return watching
        }

        package func remove(_ session: NodeSession) {
            guard let entry = bySession.removeValue(forKey: ObjectIdentifier(session)) else { return }
            boards?.unsubscribe(entry.subscription)
        }

        func removeAll() {
            for entry in bySession.values { boards?.unsubscribe(entry.subscription) }
            bySession = [:]
        }

        func push(_ message: SharedMessage, to session: NodeSession) {
            let loop = session.outbox.loop.index
            if feed[loop] == nil { feed[loop] = (session.outbox, []) }
            feed[loop]!.messages.append((session, message))
            guard !isFlushScheduled else { return }
            isFlushScheduled = true
            queue?.async { [self] in flush() }
        }

        /// Posts what was pushed: before anything else is posted from this queue, so each
        /// connection hears of changes and replies in the order they were made.
        func flush() {
            isFlushScheduled = false
            for loop in feed.keys where !feed[loop]!.messages.isEmpty {
                feed[loop]!.outbox.post(feed[loop]!.messages)
                feed[loop]!.messages.removeAll(keepingCapacity: feed[loop]!.messages.capacity <= 4_096)
            }
        }

        func closeWatchers(of type: OrderType) {
            flush()
            for (key, entry) in bySession where entry.types.contains(type) {
                bySession[key] = nil
                boards?.unsubscribe(entry.subscription)
                entry.session.outbox.post(.close(.serviceRestart, reason: "board changes were lost; subscribe again"), to: entry.session)
            }
        }
    }
}
