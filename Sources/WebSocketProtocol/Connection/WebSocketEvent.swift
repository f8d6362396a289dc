/// Something the peer did, reported by `WebSocketConnection`.
public enum WebSocketEvent: Sendable, Hashable {
    /// A complete text message; the bytes are already validated UTF-8.
    case text([UInt8])
    /// A complete binary message.
    case binary([UInt8])
    /// The peer pinged; if `repliesToPings` is on, the pong is already in `outbound`.
    case ping([UInt8])
    /// The peer answered a ping (or sent an unsolicited pong, RFC 6455 §5.5.3).
    case pong([UInt8])
    /// The connection is over; nothing follows this event. `code` is the code that ended it:
    /// the peer's when `initiatedByPeer` (1005 if its close frame had none, 1006 if the
    /// transport simply ended), otherwise ours (the one we closed or failed the connection with).
    case closed(code: CloseCode, reason: String, initiatedByPeer: Bool)
}

/// What one call into a `WebSocketConnection` produced. Reuse one value across calls: clear it
/// with `removeAll()` after acting on it so its buffers keep their capacity.
public struct WebSocketOutput: Sendable {
    /// Events, in the order the frames that caused them arrived.
    public var events: [WebSocketEvent] = []
    /// Bytes to write to the transport, in order. Write them straight from this array (e.g.
    /// `outbound.withUnsafeBytes`) and then `removeAll()`, or take the array with
    /// `takeOutbound()` when the write completes later; either way nothing is copied again.
    public var outbound: [UInt8] = []
    /// The transport should be closed once `outbound` is written; sticky once set. After this,
    /// the connection ignores further input.
    public var shouldCloseTransport = false
    /// Where a connection compresses an outgoing payload before framing it: kept here, with the
    /// caller's other buffers, so the connection holds none between calls.
    var compressionScratch: [UInt8] = []

    public init() {}

    /// Empties `events` and `outbound`, keeping their storage for the next call.
    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        outbound.removeAll(keepingCapacity: true)
    }

    /// Hands over the pending bytes without copying and leaves `outbound` empty.
    public mutating func takeOutbound() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &outbound)
        return taken
    }
}
