// The bounds the parser enforces on what a server sends.

/// Limits on server input, checked as soon as the line that announces a size is parsed, before
/// any payload is buffered.
public struct ParserLimits: Sendable, Hashable {
    /// The longest control line (`MSG …`, `INFO {…}`, `-ERR …`) including its CRLF. 64 KiB: a
    /// cluster's INFO lists every server's `connect_urls`, which passes nats-server's own 4 KiB
    /// `max_control_line` for clients' lines.
    public var maxControlLineBytes = 64 * 1024
    /// The largest message (headers and payload). 8 MiB, nats-server's hard ceiling for
    /// `max_payload`; a client lowers it to what the server's INFO announces.
    public var maxPayloadBytes = 8 * 1024 * 1024

    public init(maxControlLineBytes: Int = 64 * 1024, maxPayloadBytes: Int = 8 * 1024 * 1024) {
        precondition(maxControlLineBytes >= 64, "a control line limit below 64 bytes cannot hold a MSG line")
        precondition(maxPayloadBytes >= 0, "a payload limit cannot be negative")
        self.maxControlLineBytes = maxControlLineBytes
        self.maxPayloadBytes = maxPayloadBytes
    }
}
