// Values shared by the handshake (which negotiates them) and the connection state machine
// (which obeys them). Kept in one small file so both halves of the module agree on them.

/// Which end of the connection this state machine plays (RFC 6455 §5.1: clients mask every
/// frame they send, servers never do).
public enum Role: Sendable, Hashable {
    case server
    case client
}

/// The permessage-deflate parameters agreed in the handshake (RFC 7692 §7.1).
/// "server_…" parameters govern what the server compresses, "client_…" what the client does.
///
/// The window sizes are stored in a byte each, so the parameters (and an optional of them) take
/// four bytes in every connection that keeps them.
public struct DeflateParameters: Sendable, Hashable {
    /// The server resets its compressor after every message (RFC 7692 §7.1.1.1).
    public var serverNoContextTakeover: Bool
    /// The client resets its compressor after every message (RFC 7692 §7.1.1.2).
    public var clientNoContextTakeover: Bool
    private var serverWindowBits: UInt8
    private var clientWindowBits: UInt8

    /// LZ77 window of the server's compressor, 8...15 (RFC 7692 §7.1.2.1).
    public var serverMaxWindowBits: Int {
        get { Int(serverWindowBits) }
        set { serverWindowBits = Self.windowBits(newValue) }
    }

    /// LZ77 window of the client's compressor, 8...15 (RFC 7692 §7.1.2.2).
    public var clientMaxWindowBits: Int {
        get { Int(clientWindowBits) }
        set { clientWindowBits = Self.windowBits(newValue) }
    }

    public init(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false,
                serverMaxWindowBits: Int = 15, clientMaxWindowBits: Int = 15) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverWindowBits = Self.windowBits(serverMaxWindowBits)
        self.clientWindowBits = Self.windowBits(clientMaxWindowBits)
    }

    private static func windowBits(_ bits: Int) -> UInt8 {
        precondition((8...15).contains(bits), "window bits must be 8...15")
        return UInt8(bits)
    }
}
