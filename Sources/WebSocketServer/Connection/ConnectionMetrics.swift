// What `ClientConnection` counts: connections, upgrades, messages and bytes, closes and
// refusals. One instance per listener, shared by all its loops; the server renders it at
// `/metrics` with the rest of its own counters.
package final class ConnectionMetrics: Sendable {
    package let connectionsOpened = Counter()
    package let connectionsClosed = Counter()
    package let webSocketsOpened = Counter()
    /// WebSocket closes by who closed and the code, and `ping_timeout` / `close_timeout`.
    package let closes = LabeledCounter()
    package let handshakeFailures = LabeledCounter()
    package let messagesIn = Counter()
    package let messagesOut = Counter()
    package let bytesIn = Counter()
    package let bytesOut = Counter()
    package let slowConsumerDisconnects = Counter()
    /// Admitted connections by where their client address came from (`ClientOrigin.Source`).
    package let clientAddressSources = LabeledCounter()
    /// Requests whose forwarding headers were ignored because the peer is not a trusted proxy.
    package let forwardingHeadersIgnored = Counter()

    package init() {}
}
