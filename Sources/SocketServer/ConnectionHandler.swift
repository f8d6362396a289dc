// The contract between the transport and whatever speaks a protocol on top of it.
import Forwarding
import Platform

/// Receives a connection's events. Every method is called on the connection's loop queue,
/// never re-entrantly from inside `send` or `close`.
public protocol ConnectionHandler: AnyObject {
    /// The connection is ready for `send` (for TLS: the handshake has completed).
    func connectionDidOpen(_ connection: Connection)
    /// Bytes from the peer. The buffer belongs to the loop and is valid only during the call.
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer)
    /// The output queue fell below the low-water mark after `send` reported `.backpressure`.
    func connectionDidDrain(_ connection: Connection)
    /// `connection.deadline` has passed; it has been reset to nil before this call.
    func connectionDeadlineReached(_ connection: Connection)
    /// The last event; the descriptor is already closed. Also reports a failed client connect.
    func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason)
}

/// Why a connection ended.
public enum ConnectionCloseReason: Sendable, Equatable, CustomStringConvertible {
    /// The peer closed its side (end of stream or TLS close_notify).
    case peerClosed
    /// `close(flushFirst:)` was called (and, if flushing, the queue drained in time).
    case localClose
    /// A graceful close did not drain or see the peer's end of stream within the linger time.
    case lingerExpired
    /// The peer stopped reading and the output queue passed the hard limit; the upper layer
    /// decides how to account for the slow consumer.
    case outputLimitExceeded
    /// A read or write failed (e.g. ECONNRESET, EPIPE).
    case ioError(Errno)
    /// A client connection could not be established.
    case connectFailed(Errno)
    /// The TLS handshake failed, timed out, or the peer sent something that is not TLS.
    case tlsFailure(TLSFailure)
    /// The listener expects a PROXY protocol header and did not get a valid one in time, or
    /// the peer is not one of the proxies allowed to send it. Nothing was sent to the peer.
    case proxyHeaderRefused(ProxyHeaderRefusal)

    public var description: String {
        switch self {
        case .peerClosed: "peer closed"
        case .localClose: "closed locally"
        case .lingerExpired: "linger time expired"
        case .outputLimitExceeded: "output limit exceeded"
        case .ioError(let error): "I/O error: \(error)"
        case .connectFailed(let error): "connect failed: \(error)"
        case .tlsFailure(let failure): "TLS failure: \(failure)"
        case .proxyHeaderRefused(let refusal): "PROXY header refused: \(refusal)"
        }
    }
}

/// Why a connection on a PROXY protocol listener was closed before it opened.
public enum ProxyHeaderRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The peer is not a trusted proxy: whatever it would send cannot be believed.
    case untrustedPeer
    /// The bytes were not a valid header, or the stream ended inside it.
    case invalid(ProxyHeaderError)
    /// No complete header within `ConnectionOptions.proxyHeaderTimeoutMilliseconds`.
    case timedOut

    public var description: String {
        switch self {
        case .untrustedPeer: "the peer is not a trusted proxy"
        case .invalid(let error): error.message
        case .timedOut: "no PROXY header in time"
        }
    }
}

/// The outcome of `Connection.send`.
public enum SendResult: Sendable, Equatable {
    /// Written or queued; the queue is below the high-water mark.
    case enqueued
    /// Queued, but the queue is above the high-water mark: stop producing until
    /// `connectionDidDrain`.
    case backpressure
    /// Not queued: the connection is closing or closed, or this send would pass the hard limit
    /// (in which case the connection is being closed with `.outputLimitExceeded`).
    case dropped
}

/// What went wrong with TLS on a connection.
public struct TLSFailure: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The peers share no protocol version: a client offering only TLS 1.0/1.1 to our
        /// TLS 1.2 minimum. The peer was sent a protocol_version alert.
        case unsupportedVersion
        /// Any other handshake failure: no shared cipher, a certificate that does not verify or
        /// does not name the host, bytes that are not TLS.
        case handshake
        /// The handshake did not complete within `tlsHandshakeTimeoutMilliseconds`.
        case timeout
        /// A record failed after the handshake (decryption, encryption).
        case record
    }

    public var kind: Kind
    /// OpenSSL's own words, for logs.
    public var message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
