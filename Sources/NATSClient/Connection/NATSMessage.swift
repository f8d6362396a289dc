// A received message, owned: one array holds subject, reply subject, headers and payload, so a
// delivery costs one allocation whatever its parts.
import NATSProtocol

public struct NATSMessage: Sendable {
    private let storage: [UInt8]
    private let subjectEnd: Int
    private let replyEnd: Int
    private let headerEnd: Int
    /// The subscription it was delivered for.
    public let subscriptionID: UInt64

    init(_ view: MessageView) {
        var storage: [UInt8] = []
        storage.reserveCapacity(view.subject.count + (view.replyTo?.count ?? 0) + (view.headers?.count ?? 0) + view.payload.count)
        storage.append(contentsOf: view.subject)
        subjectEnd = storage.count
        if let replyTo = view.replyTo { storage.append(contentsOf: replyTo) }
        replyEnd = storage.count
        if let headers = view.headers { storage.append(contentsOf: headers) }
        headerEnd = storage.count
        storage.append(contentsOf: view.payload)
        self.storage = storage
        subscriptionID = view.subscriptionID
        hasReply = view.replyTo != nil
    }

    private let hasReply: Bool

    /// The subject it was published to.
    public var subject: String { String(decoding: storage[..<subjectEnd], as: UTF8.self) }

    /// Where a reply should go, if the publisher wants one.
    public var replyTo: String? {
        hasReply ? String(decoding: storage[subjectEnd..<replyEnd], as: UTF8.self) : nil
    }

    /// The payload, a view into the message's storage.
    public var payload: ArraySlice<UInt8> { storage[headerEnd...] }

    /// The raw header block, nil for a message without headers.
    public var headerBlock: ArraySlice<UInt8>? { headerEnd > replyEnd ? storage[replyEnd..<headerEnd] : nil }

    /// The parsed headers; nil without headers or when the block does not parse (the parser
    /// checked its frame, not its fields).
    public var headers: NATSHeaders? {
        guard let block = headerBlock else { return nil }
        return block.withUnsafeBytes { try? NATSHeaders.parse($0) }
    }

    /// The status code of the header block's first line (`NATS/1.0 503`), read without parsing
    /// the fields: this is what tells a JetStream answer from a "no messages" or a heartbeat.
    public var status: Int? {
        guard let block = headerBlock, block.count >= 12 else { return nil }
        let start = block.startIndex + 8
        guard block[start] == UInt8(ascii: " ") else { return nil }
        var value = 0
        for index in (start + 1)..<(start + 4) {
            let digit = block[index]
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
