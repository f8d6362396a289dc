/// Incremental parser for one HTTP/1.1 request head, fed bytes in whatever pieces the socket
/// delivers (a single byte at a time works). It stops at the end of the head and reports how
/// many bytes of the last piece it used: the rest belongs to the frame layer.
///
/// Bodies are refused as soon as the field announcing one is complete: a non-zero
/// `Content-Length` or any `Transfer-Encoding` is 413, an unparsable `Content-Length` 400.
/// We serve only body-less GET and HEAD, so never buffering a body is both simpler and safer.
///
/// A parser belongs to one connection and is used from that connection's queue only.
public struct HTTPRequestParser: Sendable {
    private var head: HTTPHeadParser<RequestLineParser>
    private var failure: HTTPParseError?
    private var isComplete = false

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        head = HTTPHeadParser(startLine: RequestLineParser(), limits: limits)
    }

    /// Consumes `bytes` up to the end of the head. After an error every further call throws
    /// the same error; calling again after `.complete` is a programming error.
    public mutating func parse(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPParseProgress<HTTPRequestHead> {
        precondition(!isComplete, "HTTPRequestParser used after the head was complete")
        if let failure { throw failure }
        var consumed = 0
        do {
            for byte in bytes {
                consumed += 1
                switch try head.consume(byte) {
                case .none:
                    continue
                case .fieldComplete:
                    try Self.checkForBody(head.fields[head.fields.count - 1])
                case .headComplete:
                    isComplete = true
                    return .complete(makeHead(), consumedBytes: consumed)
                }
            }
        } catch {
            failure = error
            throw error
        }
        return .needsMoreData
    }

    private static func checkForBody(_ field: HTTPField) throws(HTTPParseError) {
        if HTTPSyntax.equalsIgnoringCase(field.name, "Transfer-Encoding") {
            throw HTTPParseError(.bodyNotAllowed, "request bodies are not accepted")
        }
        if HTTPSyntax.equalsIgnoringCase(field.name, "Content-Length") {
            guard !field.value.isEmpty, field.value.utf8.allSatisfy(HTTPSyntax.isDigit) else {
                throw HTTPParseError(.malformed, "malformed Content-Length")
            }
            guard field.value.utf8.allSatisfy({ $0 == UInt8(ascii: "0") }) else {
                throw HTTPParseError(.bodyNotAllowed, "request bodies are not accepted")
            }
        }
    }

    private func makeHead() -> HTTPRequestHead {
        let line = head.startLine
        return HTTPRequestHead(method: String(decoding: line.method, as: UTF8.self),
                               target: String(decoding: line.target, as: UTF8.self),
                               version: line.version,
                               headers: HTTPHeaders(validated: head.fields))
    }
}
