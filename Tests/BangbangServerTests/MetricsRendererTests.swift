// `/metrics` as text: the relay's metrics appear, with their values, only on a clustered node.
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct MetricsRendererTests {
    static func render(_ metrics: ServerMetrics) -> String {
        MetricsRenderer.render(metrics, openConnections: 3, rejectedConnections: 1, residentBytes: 4096)
    }

    @Test func aSingleNodeShowsNoRelayMetrics() {
        let metrics = ServerMetrics()
        metrics.relay.hostedSessions.add(2)
        metrics.relay.envelopesIn.increment()
        let text = Self.render(metrics)
        #expect(!text.contains("bangbang_relay"))
        #expect(!text.contains("bangbang_cluster_owner"))
        #expect(text.contains("bangbang_connections_open 3\n"))
        #expect(text.hasSuffix("bangbang_process_resident_bytes 4096\n"))
    }

    @Test func aClusteredNodeShowsEveryRelayMetric() {
        let metrics = ServerMetrics()
        let relay = metrics.relay
        relay.markClustered()
        relay.isOwner.set(1)
        relay.hostedSessions.add(5)
        relay.hostedSessions.add(-1)
        relay.relayedConnections.add(2)
        relay.envelopesIn.add(7)
        relay.envelopesOut.add(9)
        relay.envelopesRefused.increment()
        relay.publishFailures.add(3)
        let text = Self.render(metrics)
        for expected in [
            "# TYPE bangbang_cluster_owner gauge\nbangbang_cluster_owner 1\n",
            "# TYPE bangbang_relay_sessions gauge\nbangbang_relay_sessions 4\n",
            "# TYPE bangbang_relayed_connections gauge\nbangbang_relayed_connections 2\n",
            "# TYPE bangbang_relay_frames_total counter\nbangbang_relay_frames_total{direction=\"in\"} 7\n"
                + "bangbang_relay_frames_total{direction=\"out\"} 9\n",
            "# TYPE bangbang_relay_refused_total counter\nbangbang_relay_refused_total 1\n",
            "# TYPE bangbang_relay_publish_failures_total counter\nbangbang_relay_publish_failures_total 3\n",
        ] {
            #expect(text.contains(expected), "missing:\n\(expected)")
        }
        for name in ["bangbang_cluster_owner", "bangbang_relay_sessions", "bangbang_relayed_connections", "bangbang_relay_frames_total",
                     "bangbang_relay_refused_total", "bangbang_relay_publish_failures_total"] {
            #expect(text.contains("# HELP \(name) "), "\(name) has no HELP line")
        }
        #expect(text.hasSuffix("bangbang_process_resident_bytes 4096\n"))
    }
}
