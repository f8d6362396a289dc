// What a standby answers, by path, as its owner directory changes; and node ids made from host
// names.
import Synchronization
import Testing
import WebSocketProtocol
@testable import BangbangServer

final class FixedOwnerDirectory: OwnerDirectory {
    let localNodeID = "bb2"
    private let owner = Mutex<String?>(nil)
    var currentOwner: String? { owner.withLock { $0 } }
    func onOwnerChange(_ handler: @escaping @Sendable (String?) -> Void) {}
    func set(_ node: String?) { owner.withLock { $0 = node } }
}

@Suite struct StandbyRoutesTests {
    let directory = FixedOwnerDirectory()

    func get(_ path: String, upgrade: Bool = false) -> HTTPResponse {
        var headers: HTTPHeaders = ["Host": "example"]
        if upgrade {
            headers.append(name: "Upgrade", value: "websocket")
            headers.append(name: "Connection", value: "Upgrade")
        }
        let router = StandbyListener.router(directory: directory, retryAfterSeconds: 2)
        return router.plainResponse(for: HTTPRequestHead(method: "GET", target: path, headers: headers))
    }

    @Test func aStandbyIsAliveNotReadyAndRefusesTheProtocolWithRetryAfter() {
        directory.set("bb1")
        #expect(get("/healthz").status == 200)
        let ready = get("/readyz")
        #expect(ready.status == 503 && String(decoding: ready.body, as: UTF8.self) == "standby; owner is bb1\n")
        let socket = get("/ws", upgrade: true)
        #expect(socket.status == 503)
        #expect(socket.headers["Retry-After"] == "2")
        #expect(String(decoding: socket.body, as: UTF8.self).hasPrefix("standby; owner is bb1"))
        #expect(get("/").status == 404)
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

    @Test func aHostNameBecomesAValidNodeID() {
        #expect(ClusterNode.nodeID(fromHostName: "n1.campus.example") == "n1")
        #expect(ClusterNode.nodeID(fromHostName: "web+01") == "web-01")
        #expect(ClusterNode.nodeID(fromHostName: "") == "node")
    }
}
