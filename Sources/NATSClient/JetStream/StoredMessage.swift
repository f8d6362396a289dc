// A message read back from a stream, by STREAM.MSG.GET or by a consumer.
import JSON
import Crypto
import NATSProtocol

public struct StoredMessage: Sendable {
    public var subject: String
    public var sequence: UInt64
    public var headers: NATSHeaders?
    public var payload: [UInt8]

    public init(subject: String, sequence: UInt64, headers: NATSHeaders?, payload: [UInt8]) {
        self.subject = subject
        self.sequence = sequence
        self.headers = headers
        self.payload = payload
    }

    /// From STREAM.MSG.GET's `{"message": {subject, seq, hdrs, data}}`, base64 inside.
    init(_ value: JSONValue) throws(NATSClientError) {
        guard let message = value["message"], let subject = message.string("subject"), let sequence = message.integer("seq"),
              sequence >= 0 else {
            throw .jetStream(.malformed("stored message without subject or seq"))
        }
        self.subject = subject
        self.sequence = UInt64(sequence)
        if let data = message.string("data") {
            guard let bytes = Base64.decode(data) else { throw .jetStream(.malformed("data that is not base64")) }
            payload = bytes
        } else {
            payload = []
        }
        if let encoded = message.string("hdrs") {
            guard let block = Base64.decode(encoded) else { throw .jetStream(.malformed("hdrs that are not base64")) }
            headers = block.withUnsafeBytes { try? NATSHeaders.parse($0) }
            guard headers != nil else { throw .jetStream(.malformed("hdrs that are not a header block")) }
        }
    }
}
