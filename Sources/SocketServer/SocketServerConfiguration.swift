// Tunables of the transport, one documented default each.
import Forwarding
import Foundation
import Platform

/// Per-connection limits, shared by server-accepted and client connections.
public struct ConnectionOptions: Sendable {
    /// Above this many queued output bytes `send` reports `.backpressure`. 256 KiB lets a
    /// burst of broadcast frames queue without stalling the producer on a healthy peer.
    public var highWaterMark = 256 * 1024
    /// `connectionDidDrain` fires once the queue falls to this. A quarter of the high-water
    /// mark gives hysteresis, so a producer is not toggled on every write.
    public var lowWaterMark = 64 * 1024
    /// A send made while more than this is already queued is dropped and the connection closed
    /// with `.outputLimitExceeded`. The check is on the backlog, not the new chunk, so a single
    /// message larger than the limit still reaches a peer that reads; memory is bounded by the
    /// limit plus the largest send. 4 MiB bounds memory for a peer that never reads while
    /// tolerating a mobile client that stalls for a few seconds.
    public var outputLimit = 4 * 1024 * 1024
    /// Bytes read per readiness event before yielding to other connections on the loop.
    /// Four reads of the 64 KiB loop buffer: large enough for throughput, small enough that one
    /// busy peer cannot starve the rest.
    public var maxBytesReadPerEvent = 256 * 1024
    /// Bytes written per writability event before yielding, for the same fairness reason.
    public var maxBytesWrittenPerEvent = 512 * 1024
    /// How long a graceful close waits for the queue to drain and the peer's end of stream.
    /// Two seconds covers a slow mobile link without letting closing sockets pile up.
    public var lingerMilliseconds: Int64 = 2_000
    /// Upper bound on a TLS handshake, so a peer that opens a socket and goes quiet cannot hold
    /// a descriptor forever. Ten seconds accommodates a poor mobile network.
    public var tlsHandshakeTimeoutMilliseconds: Int64 = 10_000
    /// Upper bound on the wait for a PROXY protocol header. A proxy sends it in its first
    /// segment, so it is late only when that segment is lost; five seconds covers a TCP
    /// retransmit, which the specification asks a receiver to wait for (at least three).
    public var proxyHeaderTimeoutMilliseconds: Int64 = 5_000

    public init() {}
}

/// What every connection of one listener (or of one `SocketClient.connect`) shares: its
/// options, and whom to tell when one is released. One immutable instance per listener, so a
/// connection holds a reference where it used to hold a copy of each.
final class ConnectionContext: Sendable {
    let options: ConnectionOptions
    /// Called on the connection's loop once its descriptor is closed (the server's count).
    let onRelease: (@Sendable () -> Void)?

    init(options: ConnectionOptions, onRelease: (@Sendable () -> Void)? = nil) {
        self.options = options
        self.onRelease = onRelease
    }
}

/// Configuration of a `TCPServer`.
public struct SocketServerConfiguration: Sendable {
    /// Address to listen on: `127.0.0.1`, `::1`, `0.0.0.0`, `::` or a name such as `localhost`
    /// (every address it resolves to is bound). `0.0.0.0` by default: a server is reached from
    /// other hosts; put it behind a firewall rather than relying on the bind address.
    public var host = "0.0.0.0"
    /// TCP port; 0 asks the kernel for a free port (read it from `start()`'s result).
    public var port = 8080
    /// Number of event loops. One per core: each loop is a serial queue, so more loops than
    /// cores only add context switches.
    public var eventLoopCount = ProcessInfo.processInfo.activeProcessorCount
    /// Kernel accept backlog. 1024 absorbs a reconnect storm of thousands of mobile clients
    /// while the accept loop catches up (the kernel caps it at net.core.somaxconn).
    public var backlog: Int32 = 1024
    /// Connections accepted per readiness event; the rest wait for the next turn, so the
    /// accept queue never monopolises a core during a storm.
    public var acceptBatchSize = 64
    /// Pause of the accept loop after EMFILE/ENFILE, instead of spinning on a full descriptor
    /// table. 100 ms is short next to client reconnect backoff and long next to a close.
    public var acceptBackoffMilliseconds = 100
    /// Hard cap on open connections; more are accepted and closed at once, so the backlog
    /// does not fill with clients that would wait forever. 20,000 matches the file limit.
    public var maxConnections = 20_000
    /// Size of each loop's shared read buffer. 64 KiB holds several TLS records and most
    /// bursts in one read, and is paid once per loop rather than per connection.
    public var readBufferSize = 64 * 1024
    /// Period of each loop's deadline sweep. 250 ms is precise enough for handshake, idle and
    /// ping deadlines measured in seconds, and costs one pass over the loop's connections.
    public var tickMilliseconds = 250
    /// The system calls this server, its listeners and its event loops make.
    /// Default `.live`: the real calls. Tests hand in a layer with a fault rule; it affects this
    /// server's sockets only.
    public var syscalls: Syscalls = .live
    /// Limits applied to every accepted connection.
    public var connection = ConnectionOptions()
    /// Serve TLS with this certificate and key; nil serves plain TCP.
    public var tls: TLSConfiguration?
    /// Expect a PROXY protocol header (v1 or v2) at the start of every connection, before TLS,
    /// and only from these peers: a connection from any other peer, or without a valid header,
    /// is closed. nil (the default) reads no header. The specification forbids guessing whether
    /// a header is present, so a listener either always expects one or never does.
    public var proxyProtocol: TrustedProxies?

    public init(host: String = "0.0.0.0", port: Int = 8080) {
        self.host = host
        self.port = port
    }
}
