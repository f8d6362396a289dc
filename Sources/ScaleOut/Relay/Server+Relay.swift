// A server on a cluster node: given who owns the partition and the node's NATS connection, `/ws`
// follows the owner (ClusterRelay.swift), the requests other nodes route to the partitions this
// node owns are answered (OwnerRequests.swift), and the personal events and board changes it
// numbers are published on the user and feed subjects (UserSubjects.swift, FeedSubjects.swift).
// Each of them is stopped first when the server shuts down. A server that is not clustered has
// none of this.
import BangbangApplication
import BangbangServer
import Cluster
import Dispatch
import NATSClient
import PartitionOwner
import SocketServer
import WebSocketProtocol
import WebSocketServer

extension Server {
    /// Starts relaying `/ws` clients to the partition's owner through `connection` (before or
    /// after `start()`). Only in cluster mode (`--nats`).
    @discardableResult
    func enableRelay(directory: OwnerDirectory, connection: NATSConnection,
                     timings: RelayTimings = RelayTimings()) throws(NATSClientError) -> ClusterRelay {
        precondition(configuration.isClustered, "the relay runs in cluster mode only (--nats)")
        let sessions = registries.map { ClientSession.Shared(app: application, registry: $0, userLimiter: userLimiter) }
        let relay = ClusterRelay(directory: directory, connection: connection, registries: registries, timings: timings,
                                 metrics: metrics.relay, logger: logger) { registry in
            ClientSession(shared: sessions[registry.loop.index])
        }
        try relay.start()
        sessionPlacement.withLock { $0 = relay }
        return relay
    }

    /// Answers the requests other nodes route to `partitions` (of a deployment partitioned by
    /// `map`) over `connection`, until `shutdown`. Only in cluster mode (`--nats`).
    @discardableResult
    func serveRoutedRequests(for partitions: [PartitionID], of map: PartitionMap,
                             connection: NATSConnection) throws(NATSClientError) -> OwnerRequests {
        precondition(configuration.isClustered, "routed requests are answered in cluster mode only (--nats)")
        let owner = OwnerRequests(requests: PartitionRequests(connection: connection), app: application, map: map)
        for partition in partitions { try owner.serve(partition) }
        // Other nodes' requests find the next owner rather than a journal about to close.
        onShutdown { owner.stopAll() }
        return owner
    }

    /// Publishes every personal event this node numbers, from now until `shutdown`, on the user
    /// subjects through `connection`. Only in cluster mode (`--nats`). Announces it for
    /// `partitions`: the events numbered while recovering were published by nobody.
    func publishPersonalEvents(for partitions: [PartitionID], on connection: NATSConnection,
                               subjects: UserSubjects = UserSubjects()) {
        precondition(configuration.isClustered, "personal events are published in cluster mode only (--nats)")
        let publisher = PersonalEventPublisher(connection: connection, subjects: subjects, metrics: metrics.relay)
        application.publisher.accounts.eventPublisher.withLock { $0 = publisher }
        onShutdown { [application] in application.publisher.accounts.eventPublisher.withLock { $0 = nil } }
        for partition in partitions { publisher.announce(partition) }
    }

    /// Publishes every board change this node numbers for `partition`, from now until `shutdown`,
    /// on the feed subjects through `connection`. Only in cluster mode.
    func publishFeedEvents(for partition: PartitionID, on connection: NATSConnection, subjects: FeedSubjects = FeedSubjects()) {
        precondition(configuration.isClustered, "the feed is published in cluster mode only (--nats)")
        let publisher = FeedEventPublisher(connection: connection, partition: partition, subjects: subjects, metrics: metrics.relay)
        application.publisher.boards.eventPublisher.withLock { $0 = publisher }
        onShutdown { [application] in application.publisher.boards.eventPublisher.withLock { $0 = nil } }
    }

    /// Hears, from now until `shutdown`, the runners every other node reports watching the boards
    /// (`bb.node.*.watching`), which `board.stats` counts with this node's own. Only in cluster mode.
    func hearWatchingReports(on connection: NATSConnection) throws(NATSClientError) {
        precondition(configuration.isClustered, "watching reports are heard in cluster mode only (--nats)")
        let (runners, logger) = (application.runnersElsewhere, logger)
        let subscription = try connection.subscribe(to: WatchingSubjects.everyNode, deliveringOn: DispatchQueue.global()) { message in
            guard let report = WatchingReport.decode(Array(message.payload)) else {
                return logger.warning("watching_report_refused", ["subject": message.subject, "bytes": message.payload.count])
            }
            runners.heard(report, at: EventLoop.now)
        }
        onShutdown { subscription.unsubscribe() }
    }
}
