/// Incremental parser for one HTTP/1.1 response head, the client-side twin of
/// `HTTPRequestParser` with the same discipline: any split of the input works, each byte is
/// looked at once, limits fail on the byte that crosses them, and the bytes after the head are
/// left to the caller. A response body, if any, is not read: the handshake needs only the head
/// and fails on anything but 101.
public struct HTTPResponseParser: Sendable {
    private var head: HTTPHeadParser<StatusLineParser>
    private var failure: HTTPParseError?
    private var isComplete = false

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        head = HTTPHeadParser(startLine: StatusLineParser(), limits: limits)
    }

    /// Consumes `bytes` up to the end of the head. After an error every further call throws
    /// the same error; calling again after `.complete` is a programming error.
    public mutating func parse(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPParseProgress<HTTPResponseHead> {
        precondition(!isComplete, "HTTPResponseParser used after the head was complete")
        if let failure { throw failure }
        var consumed = 0
        do {
            for byte in bytes {
                consumed += 1
                if case .headComplete = try head.consume(byte) {
                    isComplete = true
                    let line = head.startLine
                    let response = HTTPResponseHead(version: line.version, status: line.status,
                                                    reasonPhrase: String(decoding: line.reason, as: UTF8.self),
                                                    headers: HTTPHeaders(validated: head.fields))
                    return .complete(response, consumedBytes: consumed)
                }
            }
        } catch {
            failure = error
            throw error
        }
        return .needsMoreData
    }
}
