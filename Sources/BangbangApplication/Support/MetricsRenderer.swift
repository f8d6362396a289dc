// Renders `ServerMetrics` in the Prometheus text exposition format (version 0.0.4).
import Foundation

package enum MetricsRenderer {
    package static func render(_ metrics: ServerMetrics, openConnections: Int, rejectedConnections: Int = 0,
                       residentBytes: Int) -> String {
        var out = ""
        func counter(_ name: String, _ help: String, _ value: Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        func gauge(_ name: String, _ help: String, _ value: Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        func labeled(_ name: String, _ help: String, _ label: String, _ values: [String: Int]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                out += "\(name){\(label)=\"\(escape(key))\"} \(value)\n"
            }
        }
        func histogram(_ name: String, _ help: String, _ histogram: Histogram, labels: String = "", header: Bool = true) {
            if header { out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n" }
            let snapshot = histogram.snapshot
            var cumulative = 0
            let prefix = labels.isEmpty ? "" : labels + ","
            for (bound, count) in zip(histogram.bounds, snapshot.buckets) {
                cumulative += count
                out += "\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(snapshot.count)\n"
            let suffix = labels.isEmpty ? "" : "{\(labels)}"
            out += "\(name)_sum\(suffix) \(snapshot.sum)\n\(name)_count\(suffix) \(snapshot.count)\n"
        }

        gauge("bangbang_connections_open", "Connections open now.", openConnections)
        counter("bangbang_connections_opened_total", "Connections accepted.", metrics.connections.connectionsOpened.current)
        counter("bangbang_connections_closed_total", "Connections closed.", metrics.connections.connectionsClosed.current)
        counter("bangbang_connections_rejected_total", "Connections refused at accept: --max-connections reached.",
                rejectedConnections)
        counter("bangbang_websockets_opened_total", "Successful WebSocket upgrades.", metrics.connections.webSocketsOpened.current)
        labeled("bangbang_websocket_closes_total", "WebSocket closes by who closed and the code.", "reason", metrics.connections.closes.current)
        labeled("bangbang_handshake_failures_total", "Refused or timed-out handshakes by reason.", "reason",
                metrics.connections.handshakeFailures.current)
        counter("bangbang_messages_in_total", "WebSocket messages received.", metrics.connections.messagesIn.current)
        counter("bangbang_messages_out_total", "WebSocket messages sent.", metrics.connections.messagesOut.current)
        counter("bangbang_bytes_in_total", "Bytes received.", metrics.connections.bytesIn.current)
        counter("bangbang_bytes_out_total", "Bytes queued for sending.", metrics.connections.bytesOut.current)
        counter("bangbang_slow_consumer_disconnects_total", "Clients closed for not reading their messages.",
                metrics.connections.slowConsumerDisconnects.current)
        labeled("bangbang_requests_total", "Requests by operation and result (ok or the error code).", "operation_result",
                metrics.requests.current)
        labeled("bangbang_rate_limited_total", "Requests refused by a rate limit, and connections closed for flooding.",
                "limit", metrics.rateLimited.current)
        labeled("bangbang_admin_secret_logins_total", "auth.admin_secret attempts by result.", "result",
                metrics.adminSecretLogins.current)
        labeled("bangbang_client_address_source_total",
                "Admitted connections by where the client address came from: direct, proxy_protocol, forwarded, x_forwarded_for.",
                "source", metrics.connections.clientAddressSources.current)
        counter("bangbang_forwarding_headers_ignored_total",
                "Requests with Forwarded/X-Forwarded-* headers from a peer that is not a trusted proxy.",
                metrics.connections.forwardingHeadersIgnored.current)
        out += "# HELP bangbang_request_duration_seconds Time from request to reply.\n# TYPE bangbang_request_duration_seconds histogram\n"
        for (operation, value) in metrics.requestLatency.current.sorted(by: { $0.key < $1.key }) {
            histogram("bangbang_request_duration_seconds", "", value, labels: "operation=\"\(escape(operation))\"", header: false)
        }
        counter("bangbang_accepts_total", "Orders accepted.", metrics.accepts.current)
        counter("bangbang_races_lost_total", "Accepts that lost the race for an order.", metrics.racesLost.current)
        counter("bangbang_pushes_sent_total", "Events pushed to connections.", metrics.pushesSent.current)
        counter("bangbang_pushes_dropped_total", "Events not pushed because the connection was gone or too slow.",
                metrics.pushesDropped.current)
        let openOrders = metrics.openOrders.withLock { $0 }
        out += "# HELP bangbang_open_orders Open orders per board shard.\n# TYPE bangbang_open_orders gauge\n"
        for (key, value) in openOrders.sorted(by: { $0.key < $1.key }) { out += "bangbang_open_orders{\(key)} \(value)\n" }
        histogram("bangbang_journal_fsync_seconds",
                  "Time a journal batch took to be durable: its write and fsync, or in a cluster its stream message's publish to acknowledgement.",
                  metrics.journalFsyncLatency)
        histogram("bangbang_journal_batch_records", "Records per journal batch (in a cluster, per stream message).",
                  metrics.journalBatchRecords)
        histogram("bangbang_snapshot_duration_seconds", "Snapshot write time.", metrics.snapshotDuration)
        gauge("bangbang_snapshot_bytes", "Size of the newest snapshot.", metrics.snapshotBytes.current)
        counter("bangbang_archived_orders_total", "Closed order revisions written to the order archive.", metrics.archivedOrders.current)
        counter("bangbang_archive_failures_total", "Archive batches that failed and will be retried.", metrics.archiveFailures.current)
        gauge("bangbang_archive_pending_orders", "Closed orders waiting to be written to the archive.", metrics.archivePending.current)
        counter("bangbang_orders_moved_to_archive_total", "Closed orders moved out of memory after their rating window.",
                metrics.ordersMovedToArchive.current)
        if metrics.relay.isClustered {
            let relay = metrics.relay
            gauge("bangbang_cluster_owner", "1 while this node owns the partition, else 0.", relay.isOwner.current)
            gauge("bangbang_relay_sessions", "Relayed clients this node serves as the partition owner.", relay.hostedSessions.current)
            gauge("bangbang_relayed_connections", "Clients held by this node and relayed to another owner.",
                  relay.relayedConnections.current)
            labeled("bangbang_relay_frames_total", "Relay envelopes received from (in) and published to (out) other nodes.",
                    "direction", ["in": relay.envelopesIn.current, "out": relay.envelopesOut.current])
            counter("bangbang_relay_refused_total",
                    "Relay envelopes dropped unread: malformed, or from an owner no connection here is relayed to.",
                    relay.envelopesRefused.current)
            counter("bangbang_relay_publish_failures_total", "Relay envelopes that could not be published (their frames are lost).",
                    relay.publishFailures.current)
            labeled("bangbang_routed_requests_total", "Requests other nodes routed to a partition this node owns, by partition.",
                    "partition", relay.routedRequests.current)
            counter("bangbang_user_events_published_total",
                    "Personal events this node numbered as an account partition's owner and published on the user subjects.",
                    relay.userEventsPublished.current)
            counter("bangbang_user_event_publish_failures_total",
                    "Personal events the NATS connection would not take (nodes following the user ask for them).",
                    relay.userEventPublishFailures.current)
            gauge("bangbang_followed_streams", "Devices here following a personal stream another node numbers.",
                  relay.followedStreams.current)
            counter("bangbang_stream_questions_total", "Questions asked of an account owner for events a followed stream missed.",
                    relay.streamQuestions.current)
            counter("bangbang_stream_losses_total", "Devices closed because events of their followed stream were lost.",
                    relay.streamLosses.current)
            counter("bangbang_feed_events_published_total",
                    "Board changes this node numbered as a board partition's owner and published on the feed subjects.",
                    relay.feedEventsPublished.current)
            counter("bangbang_feed_event_publish_failures_total",
                    "Board changes the NATS connection would not take (nodes watching the board resubscribe their watchers).",
                    relay.feedEventPublishFailures.current)
            gauge("bangbang_followed_boards", "Boards whose changes from other nodes' partitions this node forwards to its watchers.",
                  relay.followedBoards.current)
            counter("bangbang_feed_gaps_total", "Times a partition's changes of a followed board skipped a number (its watchers here resubscribe).",
                    relay.feedGaps.current)
            gauge("bangbang_node_sessions", "Connections whose session runs on this node (--cluster-sessions node).",
                  relay.nodeSessions.current)
        }
        if metrics.inbox.isActive {
            let inbox = metrics.inbox
            gauge("bangbang_inbox_undelivered_entries",
                  "Personal events committed here and not yet stored in their account partition's inbox.", inbox.undeliveredEntries)
            gauge("bangbang_inbox_applied_position", "How far the account partition's inbox is applied (its stream sequence).",
                  inbox.appliedPosition.current)
            labeled("bangbang_inbox_messages_applied_total",
                    "Inbox messages applied, as a source in this process handed them over or as read from the stream.",
                    "how", ["handed_over": inbox.messagesHandedOver.current, "read": inbox.messagesRead.current])
            counter("bangbang_inbox_publish_failures_total", "Publishes to an inbox that failed and were sent again.",
                    inbox.publishFailures.current)
        }
        gauge("bangbang_process_resident_bytes", "Resident memory of the process.", residentBytes)
        return out
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// VmRSS of this process, from /proc/self/status.
    package static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return digits * 1024
        }
        return 0
    }
}
