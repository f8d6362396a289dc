/// Limits and behaviour of one `WebSocketConnection`.
///
/// The defaults suit an application protocol of small JSON messages; an endpoint that must
/// accept anything a conformance suite throws at it (the echo endpoint) uses `.echo`.
public struct WebSocketConfiguration: Sendable, Hashable {
    /// Largest payload of a single incoming frame. Default 1 MiB: no sensible application
    /// message of ours comes close, and the check runs before any payload is buffered.
    public var maxFrameSize: Int
    /// Largest incoming message, summed over fragments, and also the ceiling for its inflated
    /// size under permessage-deflate. Default 1 MiB, for the same reason.
    public var maxMessageSize: Int
    /// Most frames one incoming message may be split into. Default 1,024: it bounds the
    /// per-frame work a peer can force (e.g. a message sent one byte per frame).
    public var maxFragmentsPerMessage: Int
    /// Answer pings with pongs automatically (RFC 6455 §5.5.2 requires an answer). Default true;
    /// turn it off only if the application answers pings itself.
    public var repliesToPings: Bool

    public init(maxFrameSize: Int = 1 << 20, maxMessageSize: Int = 1 << 20,
                maxFragmentsPerMessage: Int = 1024, repliesToPings: Bool = true) {
        precondition(maxFrameSize >= 125, "control frames of 125 bytes must always fit")
        precondition(maxMessageSize >= 0 && maxFragmentsPerMessage >= 1, "limits must be positive")
        self.maxFrameSize = maxFrameSize
        self.maxMessageSize = maxMessageSize
        self.maxFragmentsPerMessage = maxFragmentsPerMessage
        self.repliesToPings = repliesToPings
    }

    /// For the echo endpoint: 16 MiB messages and frames, and 262,144 fragments, enough for a
    /// 16 MiB message cut into 64-byte pieces. That covers the large-message and
    /// heavy-fragmentation cases of the Autobahn test suite (4 MiB in 64-byte continuations
    /// after a first frame: 65,537 frames).
    public static let echo = WebSocketConfiguration(maxFrameSize: 16 << 20, maxMessageSize: 16 << 20,
                                                    maxFragmentsPerMessage: 1 << 18)
}

extension WebSocketConfiguration {
    /// A configuration held by reference, for the many connections made with it (a server
    /// route's): each connection keeps a pointer to this instead of a copy of the limits.
    public final class Shared: Sendable {
        public let configuration: WebSocketConfiguration

        public init(_ configuration: WebSocketConfiguration) {
            self.configuration = configuration
        }
    }
}
