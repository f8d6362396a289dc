// A node of a cluster whose pairs of partitions are spread over its nodes (`--partitions` above 1).
// Every node serves its own clients' sessions from start to exit (StandbyListener, NodeSession) and
// owns whichever pairs the leases give it. Taking a pair's lease recovers that pair's application
// from its snapshots and streams and serves it headless: no listener, only what other nodes route
// to it over NATS and what it publishes on the user and feed subjects; one event loop, so a pair's
// owners run on one thread. Handing a pair back to the node the placement gives it
// (PartitionMap.placement: every node an even share) stops that application cleanly (a final
// snapshot, then the lease is deleted) and the node goes on, its clients untouched. Losing a lease
// any other way, or an append the stream refuses, ends the process, as in the first step:
// crash-only, so a node never serves a pair another may have taken; a supervisor restarts it and
// its pairs are taken over.
import BangbangApplication
import BangbangServer
import Cluster
import Dispatch
import Foundation
import Journal
import PartitionOwner

extension ClusterRunner {
    /// This node took pair `pair`'s lease at `term`: its application is recovered and served.
    func takePair(_ pair: Int, term: UInt64) async {
        let started = ContinuousClock.now
        do {
            if WriteAheadLog.holdsJournal(in: configuration.dataDirectory) {
                logger.warning("partition_import_skipped", ["directory": configuration.dataDirectory, "pair": pair,
                                                            "detail": "a single node's journal is imported into a cluster of one pair only; it is not read"])
            }
            let read = try await recoverPair(pair) { _ in true }
            var pairConfiguration = configuration
            pairConfiguration.eventLoops = 1
            pairConfiguration.servesWeb = false
            let server = try await makeServer(pairConfiguration, storage: applicationStorage(of: read, pair: pair, isImport: false))
            let owner = try serveOwned(pair: pair, on: server)
            pairServers.withLock { $0[pair] = server }
            localOwners.add(owner, for: Self.partitions(of: pair))
            logServing(read, pair: pair, term: term, since: started)
            // The owner of pair 0 keeps the leases and heartbeats buckets on different leaders.
            if pair == 0 { Task { await keepLeaseAndHeartbeatLeadersApart(while: { [weak self] in self?.holds(pair: 0) ?? false }) } }
            await handle(.recovered(pair: pair))
        } catch {
            await handle(.recoveryFailed(pair: pair, detail: "\(error)"))
        }
    }

    func holds(pair: Int) -> Bool { pairServers.withLock { $0[pair] != nil } }

    static func partitions(of pair: Int) -> [PartitionID] {
        [PartitionID(space: .boards, index: pair), PartitionID(space: .accounts, index: pair)]
    }

    /// Before the lease manager hands `pair` back to its preferred owner: its application stops
    /// as on a clean stop (requests from other nodes go to the next owner, a final snapshot). A
    /// hand-back due while the pair is still being recovered waits for it.
    func stopPair(_ pair: Int) async {
        var server: Server?
        while !isLeaving && !Task.isCancelled {
            server = pairServers.withLock { $0.removeValue(forKey: pair) }
            if server != nil { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        guard let server else { return }
        localOwners.remove(Self.partitions(of: pair))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                server.shutdown(reason: "partition moving to another node")
                done.resume()
            }
        }
    }

    /// A clean stop: every pair's application writes its final snapshot and closes its journals,
    /// side by side. Blocks.
    func stopEveryPair() {
        let servers = pairServers.withLock { servers in defer { servers = [:] }; return Array(servers.values) }
        localOwners.remove(node.map.allPartitions)
        DispatchQueue.concurrentPerform(iterations: servers.count) { servers[$0].shutdown() }
    }

    /// `/metrics` lines naming the pairs this node owns.
    static func pairMetrics(_ pairs: [Int]) -> String {
        var text = "# HELP bangbang_pairs_owned Pairs of partitions this node owns and serves.\n# TYPE bangbang_pairs_owned gauge\n"
        text += "bangbang_pairs_owned \(pairs.count)\n"
        text += "# HELP bangbang_pair_owned 1 for each pair this node owns.\n# TYPE bangbang_pair_owned gauge\n"
        for pair in pairs.sorted() { text += "bangbang_pair_owned{pair=\"\(pair)\"} 1\n" }
        return text
    }
}
