// RelayProtocol: what a gateway node and the owner node say to each other about the WebSocket
// connections the gateway relays, sans-I/O (no imports: bytes in, frames out, and back).
//
// Theory of operation. A node that does not own the cluster's partition still accepts clients:
// it runs the HTTP upgrade, the WebSocket framing, deflate and pings itself and forwards each
// whole client message to the owner over NATS, which runs the application session for it and
// sends back what the client is to be sent. Each NATS message carries one `RelayEnvelope`: who
// sent it (node id and incarnation, a number drawn at process start, so a restarted node is
// never taken for its predecessor) and one or more frames, in order. A gateway publishes
// `open`, `message`, `close` and `alive` frames to `bb.relay.<owner>`; the owner publishes
// `deliver`, `closeConnection` and `alive` frames to `bb.gateway.<gateway>`. A `deliver` names
// several connections when they are all to be sent the same bytes (a feed event), so a
// broadcast crosses NATS once per gateway, not once per recipient.
//
// Wire form (integers big-endian), see RelayCodec.swift:
//
//   envelope = "BR" version:u8 nodeLength:u8 node incarnation:u64 frame*
//   frame    = kind:u8 body (the body's layout is fixed by its kind; every length is checked
//              against the bytes that remain before anything is copied)

/// Which way an envelope travels; each side accepts only the frames meant for it.
public enum RelayDirection: Sendable, Equatable {
    /// From a gateway to the owner: `open`, `message`, `close`, `alive`.
    case toOwner
    /// From the owner to a gateway: `deliver`, `closeConnection`, `alive`.
    case toGateway
}

/// Where a relayed client connected from, as the gateway established it.
public struct RelayedClient: Sendable, Equatable {
    /// The client's address in text form (what per-address limits and logs use).
    public var address: String
    /// False when a trusted proxy relayed the connection without saying for whom.
    public var isIdentified: Bool
    /// Whether the client used TLS to reach the gateway (or the proxy before it).
    public var usedTLS: Bool

    public init(address: String, isIdentified: Bool, usedTLS: Bool) {
        self.address = address
        self.isIdentified = isIdentified
        self.usedTLS = usedTLS
    }
}

public enum RelayFrame: Sendable, Equatable {
    /// Gateway → owner: a client upgraded; `connection` is unique for the gateway's incarnation.
    case open(connection: UInt64, client: RelayedClient)
    /// Gateway → owner: one whole text message from the client.
    case message(connection: UInt64, text: [UInt8])
    /// Gateway → owner: the client's connection is over.
    case close(connection: UInt64)
    /// Both ways, about once a second: the sender is alive and these are the relayed
    /// connections it holds for the receiver, so either side can drop what the other forgot.
    case alive(connections: [UInt64])
    /// Owner → gateway: send `text` to each of `connections`, in the order of the frames.
    case deliver(connections: [UInt64], text: [UInt8])
    /// Owner → gateway: close the client's WebSocket with this code and reason.
    case closeConnection(connection: UInt64, code: UInt16, reason: String)
}

/// One NATS message of the relay: the sender and its frames.
public struct RelayEnvelope: Sendable, Equatable {
    public var sender: String
    public var incarnation: UInt64
    public var frames: [RelayFrame]

    public init(sender: String, incarnation: UInt64, frames: [RelayFrame]) {
        self.sender = sender
        self.incarnation = incarnation
        self.frames = frames
    }
}

public enum RelayProtocolError: Error, Sendable, Hashable {
    /// The input does not start with "BR" and a known version.
    case badMagic
    case unsupportedVersion(UInt8)
    /// The sender's node id is empty, too long or not letters, digits, '-' and '_'.
    case invalidNodeID
    /// The input ends inside the header or a frame.
    case truncated
    case unknownFrameKind(UInt8)
    /// A frame the receiving side never gets (an `open` sent to a gateway).
    case frameInWrongDirection(UInt8)
    /// A `deliver` to no connection, or a reason or address that is not UTF-8 / too long.
    case invalidField(String)
    /// An envelope without frames.
    case empty
}
