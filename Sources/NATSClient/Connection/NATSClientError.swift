// The failures a NATS client reports to its callers.
import NATSProtocol

/// Why a NATS operation failed. JetStream's own refusals are `JetStreamError`, carried here as
/// `.jetStream`.
public enum NATSClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The subject, queue group, header or payload cannot be sent.
    case invalidCommand(CommandError)
    /// No reply (or PONG) arrived in time.
    case timeout
    /// The request's subject has no subscriber (the server's 503 status).
    case noResponders(subject: String)
    /// The connection was lost while waiting; the request may or may not have reached the server.
    case connectionLost
    /// `close()` was called.
    case closed
    /// Every server was tried and none accepted the connection.
    case noServerAvailable(lastFailure: String)
    /// More than `pendingLimitBytes` are queued.
    case outputBufferFull
    /// The server broke the protocol.
    case protocolViolation(NATSProtocolError)
    /// The server sent `-ERR` in answer to the handshake (e.g. an authorization violation).
    case serverError(String)
    /// A JetStream API call was refused, or its answer was not what the API defines.
    case jetStream(JetStreamError)
    /// The task waiting was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .invalidCommand(let error): "invalid command: \(error)"
        case .timeout: "timed out"
        case .noResponders(let subject): "no responders for \(subject)"
        case .connectionLost: "connection lost"
        case .closed: "connection closed"
        case .noServerAvailable(let failure): "no NATS server available (last failure: \(failure))"
        case .outputBufferFull: "output buffer full"
        case .protocolViolation(let error): "protocol violation: \(error)"
        case .serverError(let text): "server error: \(text)"
        case .jetStream(let error): "\(error)"
        case .cancelled: "cancelled"
        }
    }
}
