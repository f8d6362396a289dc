// The operations a NATS server sends to a client (the "server → client" half of the protocol:
// https://docs.nats.io/reference/reference-protocols/nats-protocol).

/// One operation from the server, borrowed from the parser: every buffer is valid only during
/// the callback that receives it. Copy what must outlive it (`NATSMessage` in NATSClient does).
public enum ServerOperation {
    /// `INFO {json}`: the server's description of itself, the JSON object's bytes.
    case info(UnsafeRawBufferPointer)
    /// `MSG` or `HMSG`: a message for one of the client's subscriptions.
    case message(MessageView)
    /// `PING`: the server checks that the client is alive; answer `PONG`.
    case ping
    /// `PONG`: the answer to one of the client's `PING`s, in order.
    case pong
    /// `+OK`: only sent in verbose mode.
    case ok
    /// `-ERR 'text'`: the text between the quotes. Most errors are followed by the server
    /// closing the connection; a permissions violation is not.
    case error(UnsafeRawBufferPointer)
}

/// A message as it lies in the parser's input or buffers.
public struct MessageView {
    /// The subject it was published to.
    public var subject: UnsafeRawBufferPointer
    /// The subscription it was delivered for.
    public var subscriptionID: UInt64
    /// Where replies go, if the publisher asked for one.
    public var replyTo: UnsafeRawBufferPointer?
    /// The whole header block of an `HMSG` (`NATS/1.0…\r\n\r\n`), nil for `MSG`.
    public var headers: UnsafeRawBufferPointer?
    /// The payload, without headers.
    public var payload: UnsafeRawBufferPointer

    public init(subject: UnsafeRawBufferPointer, subscriptionID: UInt64, replyTo: UnsafeRawBufferPointer?,
                headers: UnsafeRawBufferPointer?, payload: UnsafeRawBufferPointer) {
        self.subject = subject
        self.subscriptionID = subscriptionID
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }
}
