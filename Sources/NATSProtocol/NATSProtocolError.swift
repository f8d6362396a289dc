// What a NATS server can get wrong on the wire, as the parser reports it.

/// A violation of the NATS client protocol by the server. The connection that saw it is
/// unusable: the parser stays failed and every later `parse` call throws the same error.
public enum NATSProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A control line passed `ParserLimits.maxControlLineBytes` before its end was seen.
    case controlLineTooLong(limit: Int)
    /// The line does not start with an operation a server may send.
    case unknownOperation(String)
    /// An operation's arguments are missing, extra, or not what the grammar allows.
    case malformedArguments(operation: String)
    /// A message announced more bytes than `ParserLimits.maxPayloadBytes`.
    case payloadTooLarge(announced: Int, limit: Int)
    /// A message's header block is longer than the whole message, or is not a NATS/1.0 block.
    case malformedHeaders
    /// A line ended in a bare LF, or a payload was not followed by CRLF.
    case missingLineTerminator

    public var description: String {
        switch self {
        case .controlLineTooLong(let limit): "control line longer than \(limit) bytes"
        case .unknownOperation(let text): "unknown operation \"\(text)\""
        case .malformedArguments(let operation): "malformed arguments for \(operation)"
        case .payloadTooLarge(let announced, let limit): "message of \(announced) bytes exceeds the limit of \(limit)"
        case .malformedHeaders: "malformed message headers"
        case .missingLineTerminator: "missing CRLF"
        }
    }
}

/// A command the client was asked to send that the protocol cannot carry. These are the
/// caller's inputs (subjects built from data, header values), so they are reported, not trapped.
public enum CommandError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Empty, containing whitespace or control characters, empty tokens, or wildcards where
    /// none are allowed.
    case invalidSubject(String)
    /// A queue group name with whitespace or control characters.
    case invalidQueueGroup(String)
    /// A header name with a colon, whitespace or control characters, or a value with CR or LF.
    case invalidHeader(String)
    /// Larger than the server's `max_payload`.
    case payloadTooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .invalidSubject(let subject): "invalid subject \"\(subject)\""
        case .invalidQueueGroup(let group): "invalid queue group \"\(group)\""
        case .invalidHeader(let name): "invalid header \"\(name)\""
        case .payloadTooLarge(let size, let limit): "payload of \(size) bytes exceeds the server's limit of \(limit)"
        }
    }
}
