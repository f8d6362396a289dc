// Real nats-server processes for the integration tests of NATSClient and Cluster: one server,
// or a 3-node JetStream cluster, on free loopback ports, each node with its own store directory
// in a temporary directory, stopped by PID.
//
// A suite marked `.sharedNATSCluster` starts one cluster of each size its tests ask for, the first
// time one asks (`withSharedCluster`, `NATSCluster.shared`), and stops it when the suite ends;
// each test finds it with no stream, bucket or object store left by the one before. A test that
// kills, freezes or restarts a node takes a cluster of its own (`withCluster`), and so does a
// suite without the trait.
//
// nats-server comes from Debian (scripts/bootstrap.sh installs it); `NATS_SERVER` names another
// binary. Without one the tests fail with a message saying so: they are never skipped.
import Foundation
import Glibc
import Synchronization
import NATSClient
import Testing
import TestSupport

public final class NATSCluster: @unchecked Sendable {
    // Confinement: built once, then used by one test at a time (the suites that share one are
    // serialized); `processes` is only changed by `kill`, `relaunch` and `stop` from that test,
    // and `damaged` by `kill`, `freeze` and `relaunch`, read by the suite's next test.
    public struct Node: Sendable {
        public let name: String
        public let clientPort: Int
        public let routePort: Int
        public let configPath: String
    }

    public let nodes: [Node]
    public let directory: String
    private var processes: [Int: ChildProcess] = [:]
    /// A suite's shared cluster: `stop` leaves it running for the suite's next test.
    fileprivate var isShared = false
    /// A node was killed, frozen or restarted: the suite's next test gets a new cluster.
    fileprivate var damaged = false

    public var addresses: [NATSServerAddress] { nodes.map { NATSServerAddress(host: "127.0.0.1", port: $0.clientPort) } }

    /// Starts `size` nodes (1: a single JetStream server; 3: a cluster) and waits until
    /// JetStream answers on every node, which in a cluster means a meta leader was elected.
    /// Starts `size` servers and waits until JetStream places a stream on each. A server that
    /// could not bind its port (another test's server or client took it between the choice and
    /// the bind) exits at once, while the probes may reach whoever holds the port: the whole
    /// cluster is then started again on other ports, so a test never shares another's server.
    public static func start(size: Int, timeoutSeconds: Double = 20) async throws -> NATSCluster {
        var attempt = 1
        while true {
            let cluster = try await startOnce(size: size, timeoutSeconds: timeoutSeconds)
            if cluster.processes.count == size, cluster.processes.values.allSatisfy(\.isRunning) { return cluster }
            cluster.stop()
            guard attempt < 3 else { throw HarnessError("a nats-server of the cluster exited at start three times; logs in \(cluster.directory)") }
            attempt += 1
        }
    }

    private static func startOnce(size: Int, timeoutSeconds: Double) async throws -> NATSCluster {
        let binary = try serverBinary()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-nats-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ports = try freePorts(count: size * 2)
        var nodes: [Node] = []
        for index in 0..<size {
            let name = "n\(index + 1)"
            let node = Node(name: name, clientPort: ports[index], routePort: ports[size + index],
                            configPath: "\(directory)/\(name).conf")
            nodes.append(node)
        }
        for (index, node) in nodes.enumerated() {
            var config = """
                server_name: \(node.name)
                listen: 127.0.0.1:\(node.clientPort)
                jetstream {
                  store_dir: "\(directory)/\(node.name)"
                  max_memory_store: 64MB
                  max_file_store: 1GB
                }

                """
            if size > 1 {
                let routes = nodes.enumerated().filter { $0.offset != index }.map { "nats://127.0.0.1:\($0.element.routePort)" }
                config += """
                    cluster {
                      name: bangbang-test
                      listen: 127.0.0.1:\(node.routePort)
                      routes: [\(routes.joined(separator: ", "))]
                    }

                    """
            }
            try config.write(toFile: node.configPath, atomically: true, encoding: .utf8)
        }
        let cluster = NATSCluster(nodes: nodes, directory: directory)
        do {
            for index in nodes.indices { try cluster.launch(index, binary: binary) }
            try await cluster.waitForJetStream(timeoutSeconds: timeoutSeconds)
        } catch {
            cluster.stop()
            throw error
        }
        return cluster
    }

    private init(nodes: [Node], directory: String) {
        self.nodes = nodes
        self.directory = directory
    }

    private func launch(_ index: Int, binary: String) throws {
        processes[index] = try ChildProcess(executable: binary, arguments: ["-c", nodes[index].configPath],
                                            logPath: "\(directory)/\(nodes[index].name).log")
    }

    /// Process id of node `index`, while it runs.
    public func pid(of index: Int) -> Int32? { processes[index]?.pid }

    /// `kill -9` of one node, by the PID this harness started.
    public func kill(_ index: Int) {
        damaged = true
        guard let process = processes.removeValue(forKey: index) else { return }
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Starts node `index` again after `kill`, with its configuration and store.
    public func relaunch(_ index: Int) throws {
        damaged = true
        guard processes[index] == nil else { return }
        try launch(index, binary: try Self.serverBinary())
    }

    /// Starts node `index` again after `kill` and waits until the cluster places a stream on
    /// every node again: what a test sharing the cluster with later tests does before it ends.
    public func restore(_ index: Int, timeoutSeconds: Double = 30) async throws {
        try relaunch(index)
        try await waitForPlacement(deadline: Date().addingTimeInterval(timeoutSeconds))
    }

    /// Freezes node `index` (SIGSTOP) until `thaw`: it keeps its connections and reads nothing,
    /// so what a client sends it waits unanswered for as long as the test says, where waiting on
    /// a slow answer would be a race.
    public func freeze(_ index: Int) {
        damaged = true
        processes[index]?.signal(SIGSTOP)
    }

    public func thaw(_ index: Int) {
        processes[index]?.signal(SIGCONT)
    }

    /// Stops every node still running (SIGTERM, then SIGKILL after two seconds) and removes
    /// the store directories. A suite's shared cluster is left running for its next test (the
    /// suite stops it when it ends).
    public func stop() {
        guard !isShared else { return }
        stopProcesses()
    }

    fileprivate func stopProcesses() {
        for (_, process) in processes { process.signal(SIGCONT); process.signal(SIGTERM) }
        let deadline = Date().addingTimeInterval(2)
        for (_, process) in processes {
            while process.isRunning, Date() < deadline { usleep(10_000) }
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
        processes.removeAll()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The node whose client port is `address`'s.
    public func index(of address: NATSServerAddress) -> Int? {
        nodes.firstIndex { $0.clientPort == address.port }
    }

    private func waitForJetStream(timeoutSeconds: Double) async throws {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        for index in nodes.indices {
            var configuration = NATSConfiguration(servers: [addresses[index]], name: "cluster-probe")
            configuration.reconnectWaitMilliseconds = 20
            configuration.maxReconnectWaitMilliseconds = 100
            let connection = NATSConnection(configuration: configuration)
            defer { Task { await connection.close() } }
            while true {
                guard Date() < deadline else { throw HarnessError("JetStream did not become ready on \(nodes[index].name); logs in \(directory)") }
                do {
                    try await connection.connect()
                    let reply = try await connection.request("$JS.API.INFO", payload: [], timeoutMilliseconds: 1_000)
                    if !String(decoding: reply.payload, as: UTF8.self).contains("\"error\"") { break }
                } catch {}
                try await Task.sleep(for: .milliseconds(100))
            }
            await connection.close()
        }
        try await waitForPlacement(deadline: deadline)
    }

    /// Every node answering `$JS.API.INFO` is not yet enough: until the meta leader has heard from
    /// every peer, a stream with one replica per node is refused with 10005 ("no suitable peers
    /// for placement"). A probe stream is created (and deleted) until it is placed.
    private func waitForPlacement(deadline: Date) async throws {
        var configuration = NATSConfiguration(servers: addresses, name: "cluster-placement-probe")
        configuration.reconnectWaitMilliseconds = 20
        configuration.maxReconnectWaitMilliseconds = 100
        let connection = NATSConnection(configuration: configuration)
        defer { Task { await connection.close() } }
        let create = Array(#"{"name":"HARNESS_PROBE","subjects":["harness.probe"],"storage":"memory","num_replicas":\#(nodes.count)}"#.utf8)
        while true {
            guard Date() < deadline else { throw HarnessError("JetStream could not place a stream on every node; logs in \(directory)") }
            do {
                try await connection.connect()
                let reply = try await connection.request("$JS.API.STREAM.CREATE.HARNESS_PROBE", payload: create,
                                                         timeoutMilliseconds: 2_000)
                if !String(decoding: reply.payload, as: UTF8.self).contains("\"error\"") {
                    _ = try? await connection.request("$JS.API.STREAM.DELETE.HARNESS_PROBE", payload: [], timeoutMilliseconds: 2_000)
                    break
                }
            } catch {}
            try await Task.sleep(for: .milliseconds(100))
        }
        await connection.close()
    }

    private static func serverBinary() throws -> String {
        if let named = ProcessInfo.processInfo.environment["NATS_SERVER"] { return named }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/usr/bin:/usr/local/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/nats-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw HarnessError("nats-server not found: run scripts/bootstrap.sh (it installs Debian's nats-server) or set NATS_SERVER")
    }

    /// Ports the kernel hands out for port 0 on loopback. Each socket stays open until all
    /// are chosen, so the ports differ; a race with another process is possible but rare.
    public static func freePorts(count: Int) throws -> [Int] {
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw HarnessError("socket: \(errno)") }
            descriptors.append(descriptor)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
                }
            }
            guard bound else { throw HarnessError("bind: \(errno)") }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh cluster and always stops it. The stop waits up to two seconds for
/// the servers to exit, so it runs on a Dispatch thread, not on one of the few threads of the
/// concurrency pool that other tests' tasks need meanwhile.
public func withCluster<Result>(size: Int = 3, _ body: (NATSCluster) async throws -> Result) async throws -> Result {
    let cluster = try await NATSCluster.start(size: size)
    do {
        let result = try await body(cluster)
        try await offThePool { cluster.stop() }
        return result
    } catch {
        try? await offThePool { cluster.stop() }
        throw error
    }
}

/// A connected client of `cluster`, listing all its nodes, starting with `first`.
public func connectClient(to cluster: NATSCluster, first: Int = 0, name: String = "test") async throws -> NATSConnection {
    var servers = cluster.addresses
    servers.insert(servers.remove(at: first), at: 0)
    var configuration = NATSConfiguration(servers: servers, name: name)
    configuration.reconnectWaitMilliseconds = 20
    configuration.maxReconnectWaitMilliseconds = 200
    configuration.pingIntervalMilliseconds = 1_000
    let connection = NATSConnection(configuration: configuration)
    try await connection.connect()
    return connection
}

/// TestSupport's `eventually`, checking every 10 ms, for conditions that ask a server: an error
/// thrown by `condition` counts as "not yet", and if time runs out the thrown error names `what`
/// and the last such error.
public func eventually(timeoutSeconds: Double = 10, _ what: String, _ condition: () async throws -> Bool) async throws {
    var lastError: (any Error)?
    let held = await TestSupport.eventually(timeout: .milliseconds(Int(timeoutSeconds * 1000)), interval: .milliseconds(10)) {
        do {
            return try await condition()
        } catch {
            lastError = error
            return false
        }
    }
    if !held {
        throw HarnessError("timed out waiting for \(what)" + (lastError.map { "; last error: \($0)" } ?? ""))
    }
}

/// The JetStream error `body` threw; nil when it succeeded (or failed otherwise, which is
/// recorded).
public func jetStreamError(_ body: () async throws -> Void) async -> JetStreamError? {
    do {
        try await body()
        return nil
    } catch NATSClientError.jetStream(let error) {
        return error
    } catch {
        Issue.record("expected a JetStream error, got \(error)")
        return nil
    }
}

// MARK: One cluster for a suite

/// `@Suite(.serialized, .sharedNATSCluster)`: the suite's tests share one cluster of each size
/// they ask for, started when the first asks and stopped when the suite ends. The suite must be
/// serialized: each test starts from a cluster emptied of what the one before made.
public struct SharedNATSClusterTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let clusters = SharedClusters()
        await SharedClusters.suitesRunning.acquire()
        do {
            try await SharedClusters.$current.withValue(clusters) { try await function() }
        } catch {
            await clusters.stopAll()
            SharedClusters.suitesRunning.release()
            throw error
        }
        await clusters.stopAll()
        SharedClusters.suitesRunning.release()
    }
}

extension Trait where Self == SharedNATSClusterTrait {
    public static var sharedNATSCluster: SharedNATSClusterTrait { SharedNATSClusterTrait() }
}

extension NATSCluster {
    /// The suite's shared cluster of `size` nodes (see `SharedNATSClusterTrait`), empty: no
    /// stream, bucket or object store left from the suite's previous tests. `stop` leaves it to
    /// the suite.
    public static func shared(size: Int) async throws -> NATSCluster {
        guard let clusters = SharedClusters.current else {
            throw HarnessError("NATSCluster.shared is for the tests of a suite marked .sharedNATSCluster")
        }
        return try await clusters.cluster(size: size)
    }
}

/// Runs `body` with the suite's shared cluster of `size` nodes, emptied of the previous tests'
/// streams. A test that kills, freezes or restarts a node uses `withCluster`: its own.
public func withSharedCluster<Result>(size: Int = 3, _ body: (NATSCluster) async throws -> Result) async throws -> Result {
    try await body(try await NATSCluster.shared(size: size))
}

/// The clusters of one suite, by size.
final class SharedClusters: Sendable {
    @TaskLocal static var current: SharedClusters?

    /// At most this many suites hold clusters at once: on two cores, more nats-server clusters
    /// starting and electing leaders side by side slow every test that uses one.
    static let suitesRunning = AsyncSemaphore(count: 3)

    private let clusters = AsyncMutex<[Int: NATSCluster]>([:])

    func cluster(size: Int) async throws -> NATSCluster {
        try await clusters.withLock { clusters in
            if let cluster = clusters[size] {
                if !cluster.damaged, cluster.processes(running: size), (try? await cluster.empty()) != nil { return cluster }
                // A node was killed, frozen or restarted, or the cluster does not answer: a new one.
                try? await offThePool { cluster.stopProcesses() }
                clusters[size] = nil
            }
            let cluster = try await NATSCluster.start(size: size)
            cluster.isShared = true
            clusters[size] = cluster
            return cluster
        }
    }

    func stopAll() async {
        await clusters.withLock { clusters in
            for cluster in clusters.values { try? await offThePool { cluster.stopProcesses() } }
            clusters.removeAll()
        }
    }
}

extension NATSCluster {
    fileprivate func processes(running size: Int) -> Bool {
        processes.count == size && processes.values.allSatisfy(\.isRunning)
    }

    /// Deletes every stream (KV buckets and object stores are streams too) and checks that the
    /// cluster still places one on every node.
    fileprivate func empty() async throws {
        var configuration = NATSConfiguration(servers: addresses, name: "cluster-reset")
        configuration.reconnectWaitMilliseconds = 20
        configuration.maxReconnectWaitMilliseconds = 100
        let connection = NATSConnection(configuration: configuration)
        do {
            try await connection.connect()
            let jetStream = JetStream(connection: connection)
            while true {
                let reply = try await connection.request("$JS.API.STREAM.NAMES", payload: Array(#"{"offset":0}"#.utf8),
                                                         timeoutMilliseconds: 5_000)
                let names = Self.streamNames(in: String(decoding: reply.payload, as: UTF8.self))
                guard let names else { throw HarnessError("STREAM.NAMES answered \(String(decoding: reply.payload, as: UTF8.self))") }
                if names.isEmpty { break }
                for name in names { try await jetStream.deleteStream(name) }
            }
            try await waitForPlacement(deadline: Date().addingTimeInterval(10))
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// The names in a `STREAM.NAMES` answer (`"streams":["A","B"]`, or `null` for none); nil for
    /// an error or an answer of another shape.
    static func streamNames(in answer: String) -> [String]? {
        if answer.contains("\"error\"") { return nil }
        if answer.contains("\"streams\":null") { return [] }
        guard let start = answer.range(of: "\"streams\":[") else { return nil }
        let rest = answer[start.upperBound...]
        guard let end = rest.firstIndex(of: "]") else { return nil }
        return rest[..<end].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
            .filter { !$0.isEmpty }
    }
}

/// A counting semaphore for tasks: `acquire` suspends (holding no thread) until a unit is free.
final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>

    init(count: Int) { state = Mutex(State(available: count)) }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                if state.available > 0 { state.available -= 1; return true }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty { state.available += 1; return nil }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

/// A lock held across suspension points, for one suite's clusters.
final class AsyncMutex<Value: Sendable>: @unchecked Sendable {
    // Confinement: `value` is only touched between `acquire` and `release` of `gate`.
    private var value: Value
    private let gate = AsyncSemaphore(count: 1)

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) async throws -> Result) async rethrows -> Result {
        await gate.acquire()
        defer { gate.release() }
        return try await body(&value)
    }
}
