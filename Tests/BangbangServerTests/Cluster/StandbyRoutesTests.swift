// What a standby answers, by path, as its owner directory changes; and node ids made from host
// names.
import NATSClient
import Synchronization
import Testing
import WebSocketProtocol
import WebSocketServer
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

final class FixedOwnerDirectory: OwnerDirectory {
    let localNodeID = "bb2"
    private let owner = Mutex<String?>(nil)
    var currentOwner: String? { owner.withLock { $0 } }
    func onOwnerChange(_ handler: @escaping @Sendable (String?) -> Void) {}
    func set(_ node: String?) { owner.withLock { $0 = node } }
}

@Suite struct StandbyRoutesTests {
    let directory = FixedOwnerDirectory()
    /// The relay to the owner, once the node is on NATS (never connected here: nothing is sent).
    let gateway = StandbySlot<RelayGateway>()
    let metrics = ServerMetrics()

    func router() -> HTTPRouter {
        let gateway = gateway
        return StandbyListener.router(directory: directory, retryAfterSeconds: 2,
                                      webSocket: WebSocketConfiguration(maxFrameSize: 1024, maxMessageSize: 1024,
                                                                        maxFragmentsPerMessage: 4),
                                      gateway: { gateway.current },
                                      metrics: { [metrics] in MetricsRenderer.render(metrics, openConnections: 3, residentBytes: 0) })
    }

    func get(_ path: String) -> HTTPResponse {
        router().plainResponse(for: HTTPRequestHead(method: "GET", target: path, headers: ["Host": "example"]))
    }

    /// What a valid upgrade on `/ws` is answered with before the 101: nil means it is relayed.
    func upgradeRefusal() -> HTTPResponse? {
        router().webSocketRoutes["/ws"]?.refusal()
    }

    func startRelaying() {
        let connection = NATSConnection(configuration: NATSConfiguration(servers: [NATSServerAddress(host: "127.0.0.1", port: 4222)]))
        let relay = RelayGateway(node: RelayNode(nodeID: directory.localNodeID, incarnation: 1), connection: connection,
                                 timings: RelayTimings(), logger: Logger(level: .error, sink: { _ in }))
        gateway.current = relay
    }

    @Test func aStandbyIsAliveNotReadyAndRefusesTheProtocolWithRetryAfter() throws {
        directory.set("bb1")
        #expect(get("/healthz").status == 200)
        let ready = get("/readyz")
        #expect(ready.status == 503 && String(decoding: ready.body, as: UTF8.self) == "standby; owner is bb1\n")
        // Not on NATS yet: nothing to relay through.
        let socket = try #require(upgradeRefusal())
        #expect(socket.status == 503)
        #expect(socket.headers["Retry-After"] == "2")
        #expect(String(decoding: socket.body, as: UTF8.self).hasPrefix("standby; owner is bb1"))
        #expect(get("/").status == 404)
    }

    @Test func onNATSAStandbyRelaysTheProtocolToAKnownOwnerOnly() throws {
        startRelaying()
        directory.set("bb1")
        #expect(upgradeRefusal() == nil, "a standby on NATS relays to the owner")
        directory.set(nil)
        #expect(try #require(upgradeRefusal()).status == 503, "no owner: nothing to relay to")
        directory.set("bb2")
        #expect(try #require(upgradeRefusal()).status == 503, "recovering itself: nothing to relay to")
    }

    @Test func duringAFailoverTheStandbySaysNobodyOwnsThePartition() {
        directory.set(nil)
        #expect(String(decoding: get("/readyz").body, as: UTF8.self) == "standby; no owner yet (failover in progress)\n")
    }

    @Test func betweenTakingTheLeaseAndServingTheNodeSaysItIsRecovering() {
        directory.set("bb2")
        let ready = get("/readyz")
        #expect(ready.status == 503)
        #expect(String(decoding: ready.body, as: UTF8.self).hasPrefix("recovering; this node owns the partition"))
    }

    @Test func aStandbyShowsItsConnectionsAndItsSideOfTheRelayInMetrics() {
        metrics.relay.markClustered()
        metrics.relay.relayedConnections.add(2)
        let response = get("/metrics")
        #expect(response.status == 200)
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("\nbangbang_relayed_connections 2\n"), "\(text)")
        #expect(text.contains("\nbangbang_connections_open 3\n"), "\(text)")
    }

    @Test func aHostNameBecomesAValidNodeID() {
        #expect(ClusterNode.nodeID(fromHostName: "n1.campus.example") == "n1")
        #expect(ClusterNode.nodeID(fromHostName: "web+01") == "web-01")
        #expect(ClusterNode.nodeID(fromHostName: "") == "node")
    }
}
