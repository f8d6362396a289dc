// The headers that make a JetStream publish conditional or idempotent, and its acknowledgement.
import JSON
import NATSProtocol

/// Conditions a publish carries (https://docs.nats.io/nats-concepts/jetstream/headers).
public struct PublishOptions: Sendable, Equatable {
    /// `Nats-Msg-Id`: within the stream's duplicate window a second publish with the same id
    /// is acknowledged again (with `duplicate`) and not stored twice.
    public var messageID: String?
    /// `Nats-Expected-Last-Sequence`: stored only if the stream's last sequence is this.
    public var expectedLastSequence: UInt64?
    /// `Nats-Expected-Last-Subject-Sequence`: stored only if the last message on this subject
    /// has this sequence (0: there is none).
    public var expectedLastSubjectSequence: UInt64?
    /// `Nats-Expected-Stream`: stored only by the stream of this name.
    public var expectedStream: String?

    public init(messageID: String? = nil, expectedLastSequence: UInt64? = nil,
                expectedLastSubjectSequence: UInt64? = nil, expectedStream: String? = nil) {
        self.messageID = messageID
        self.expectedLastSequence = expectedLastSequence
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedStream = expectedStream
    }

    func apply(to headers: NATSHeaders) -> NATSHeaders {
        var headers = headers
        if let messageID { headers.set("Nats-Msg-Id", messageID) }
        if let expectedLastSequence { headers.set("Nats-Expected-Last-Sequence", String(expectedLastSequence)) }
        if let expectedLastSubjectSequence {
            headers.set("Nats-Expected-Last-Subject-Sequence", String(expectedLastSubjectSequence))
        }
        if let expectedStream { headers.set("Nats-Expected-Stream", expectedStream) }
        return headers
    }
}

/// A stream's acknowledgement of a stored message.
public struct PublishAck: Sendable, Equatable {
    public var stream: String
    /// The message's sequence in the stream.
    public var sequence: UInt64
    /// True when the message id was seen within the duplicate window: nothing new was stored,
    /// and `sequence` is the first copy's.
    public var isDuplicate: Bool

    init(_ value: JSONValue) throws(NATSClientError) {
        guard let stream = value.string("stream"), let sequence = value.integer("seq"), sequence >= 0 else {
            throw .jetStream(.malformed("publish acknowledgement without stream or seq"))
        }
        self.stream = stream
        self.sequence = UInt64(sequence)
        isDuplicate = value.bool("duplicate")
    }
}
