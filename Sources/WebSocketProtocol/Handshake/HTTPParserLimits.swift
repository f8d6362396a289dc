/// Size limits for an HTTP/1.1 message head, enforced byte by byte while parsing: the parser
/// fails on the first byte that crosses a limit, so a peer can never make us buffer more than
/// these bounds however it splits or pads its input.
///
/// The same limits serve the request parser (server side) and the response parser (client side).
public struct HTTPParserLimits: Sendable, Hashable {
    /// Longest request line (or status line), excluding its CRLF. Exceeding it is 414.
    ///
    /// Default 8 KiB: RFC 9112 §3 recommends supporting request lines of at least 8000 octets,
    /// and our WebSocket URLs are short, so anything longer is an attack or a mistake.
    public var maximumStartLineLength: Int
    /// Most bytes in the header block: every field line plus the terminating empty line, CRLFs
    /// included. Exceeding it is 431.
    ///
    /// Default 16 KiB: a browser handshake with cookies is typically well under 4 KiB; this
    /// leaves room for large cookies while keeping the per-connection cost of a slow or hostile
    /// client bounded.
    public var maximumHeaderBlockSize: Int
    /// Most field lines. The first line beyond it is 431.
    ///
    /// Default 100: a handshake needs about a dozen; a flood of tiny headers costs allocations
    /// out of proportion to its bytes, so it is capped separately from the byte limit.
    public var maximumHeaderCount: Int

    public init(maximumStartLineLength: Int = 8 * 1024,
                maximumHeaderBlockSize: Int = 16 * 1024,
                maximumHeaderCount: Int = 100) {
        precondition(maximumStartLineLength > 0 && maximumHeaderBlockSize > 0 && maximumHeaderCount >= 0,
                     "HTTP parser limits must be positive")
        self.maximumStartLineLength = maximumStartLineLength
        self.maximumHeaderBlockSize = maximumHeaderBlockSize
        self.maximumHeaderCount = maximumHeaderCount
    }
}
