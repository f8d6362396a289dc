// The common shape of a publish acknowledgement, read without the general JSON parser: a
// pipelined writer reads one per append. nats-server 2.9 writes it as
// `{"stream":"<name>", "seq":<n>}`, with `"domain"` and `"duplicate":true` after them when they
// apply. This reads exactly those members in that order, with any JSON whitespace between
// tokens. Anything else (an error, escapes, another order, a member this does not know) is not
// this shape, and the caller falls back to the JSON parser, so this never decides what an
// unusual answer means.

extension PublishAck {
    /// Reads `payload` if it is exactly the compact shape; nil otherwise.
    init?<Bytes: Collection<UInt8>>(compact payload: Bytes) {
        var reader = CompactReader(payload)
        guard reader.take("{"), reader.member("stream"), let stream = reader.plainString(),
              reader.take(","), reader.member("seq"), let sequence = reader.unsignedInteger() else { return nil }
        var isDuplicate = false
        var hasMore = reader.take(",")
        if hasMore, reader.member("domain") {
            guard reader.plainString() != nil else { return nil }
            hasMore = reader.take(",")
        }
        if hasMore {
            guard reader.member("duplicate") else { return nil }
            if reader.take("true") {
                isDuplicate = true
            } else if !reader.take("false") {
                return nil
            }
        }
        guard reader.take("}") else { return nil }
        reader.skipWhitespace()
        guard reader.isAtEnd else { return nil }
        self.init(stream: String(decoding: stream, as: UTF8.self), sequence: sequence, isDuplicate: isDuplicate)
    }

    init(stream: String, sequence: UInt64, isDuplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.isDuplicate = isDuplicate
    }
}

/// A cursor over the bytes of one compact answer.
private struct CompactReader<Bytes: Collection<UInt8>> {
    let bytes: Bytes
    var position: Bytes.Index

    init(_ bytes: Bytes) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var isAtEnd: Bool { position == bytes.endIndex }

    mutating func skipWhitespace() {
        while position != bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { bytes.formIndex(after: &position) }
    }

    /// Consumes `"name":` (with whitespace around its tokens) if the bytes continue with it.
    mutating func member(_ name: StaticString) -> Bool {
        let start = position
        guard take("\""), takeExactly(name), takeExactly("\""), take(":") else {
            position = start
            return false
        }
        return true
    }

    /// Consumes whitespace and then `literal` if the bytes continue with it.
    mutating func take(_ literal: StaticString) -> Bool {
        let start = position
        skipWhitespace()
        guard takeExactly(literal) else {
            position = start
            return false
        }
        return true
    }

    /// Consumes `literal` if the bytes continue with it right here.
    mutating func takeExactly(_ literal: StaticString) -> Bool {
        var index = position
        let matches = literal.withUTF8Buffer { expected in
            for byte in expected {
                guard index != bytes.endIndex, bytes[index] == byte else { return false }
                bytes.formIndex(after: &index)
            }
            return true
        }
        if matches { position = index }
        return matches
    }

    /// A non-empty string with no escape and no control character; its bytes without quotes.
    mutating func plainString() -> Bytes.SubSequence? {
        skipWhitespace()
        guard position != bytes.endIndex, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = bytes.index(after: position)
        var index = start
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard index != start else { return nil }
                position = bytes.index(after: index)
                return bytes[start..<index]
            }
            guard byte != UInt8(ascii: "\\"), byte >= 0x20 else { return nil }
            bytes.formIndex(after: &index)
        }
        return nil
    }

    /// Decimal digits with no sign and no leading zero (but "0"), at most `Int64.max` (what the
    /// JSON path reads).
    mutating func unsignedInteger() -> UInt64? {
        skipWhitespace()
        var value: UInt64 = 0
        var index = position
        var digits = 0
        while index != bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            if digits == 1, value == 0 { return nil }
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
            digits += 1
            bytes.formIndex(after: &index)
        }
        guard digits > 0, value <= UInt64(Int64.max) else { return nil }
        position = index
        return value
    }
}
