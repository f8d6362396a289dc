// Message headers: the NATS/1.0 block that HMSG carries and HPUB sends
// (https://github.com/nats-io/nats-architecture-and-design/blob/main/adr/ADR-4.md).
//
// A block is `NATS/1.0[ status[ description]]\r\n`, then `Name: Value\r\n` lines, then an
// empty line. The status line is how the server speaks inside a message: 503 "no responders",
// 404 "no messages" and 408 "request timeout" to a pull request, 100 for heartbeats and flow
// control. Names keep the case they were sent with; lookups ignore ASCII case, which is how
// servers compare the JetStream header names.

/// An ordered list of header fields with an optional status.
public struct NATSHeaders: Sendable, Hashable {
    /// The status code of the first line (e.g. 503), when the block has one.
    public var status: Int?
    /// The words after the status code.
    public var statusDescription: String
    /// Fields in the order they were sent; a name may appear more than once.
    public var fields: [(name: String, value: String)]

    public init(status: Int? = nil, statusDescription: String = "", fields: [(name: String, value: String)] = []) {
        self.status = status
        self.statusDescription = statusDescription
        self.fields = fields
    }

    /// The first value of `name`, compared without regard to ASCII case.
    public subscript(name: String) -> String? {
        fields.first { Self.equalIgnoringCase($0.name, name) }?.value
    }

    /// Appends a field.
    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field called `name` with one.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.equalIgnoringCase($0.name, name) }
        fields.append((name, value))
    }

    public static func == (lhs: NATSHeaders, rhs: NATSHeaders) -> Bool {
        lhs.status == rhs.status && lhs.statusDescription == rhs.statusDescription
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    private static func equalIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8) { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}

// MARK: Parsing

extension NATSHeaders {
    /// Parses a whole block as `MessageView.headers` gives it. Throws `.malformedHeaders` for
    /// anything that is not a NATS/1.0 block of `Name: Value` lines.
    public static func parse(_ block: UnsafeRawBufferPointer) throws(NATSProtocolError) -> NATSHeaders {
        var lines = HeaderLines(block)
        guard let first = lines.next(), first.starts(with: "NATS/1.0".utf8) else { throw .malformedHeaders }
        var headers = NATSHeaders()
        let statusPart = String(decoding: first.dropFirst(8), as: UTF8.self)
        let words = statusPart.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        if let code = words.first {
            guard code.utf8.count == 3, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let value = Int(code) else { throw .malformedHeaders }
            headers.status = value
            if words.count > 1 { headers.statusDescription = String(words[1]) }
        }
        var sawEnd = false
        while let line = lines.next() {
            if line.isEmpty {
                sawEnd = true
                break
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { throw .malformedHeaders }
            let name = line[line.startIndex..<colon]
            guard name.allSatisfy(isNameByte) else { throw .malformedHeaders }
            var valueStart = colon + 1
            while valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") {
                valueStart += 1
            }
            headers.fields.append((String(decoding: name, as: UTF8.self),
                                   String(decoding: line[valueStart...], as: UTF8.self)))
        }
        guard sawEnd, lines.isAtEnd else { throw .malformedHeaders }
        return headers
    }

    /// Visible ASCII except the colon (RFC 7230 §3.2 field names are narrower; servers and
    /// clients in the wild accept this much).
    static func isNameByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ":")
    }
}

/// Splits a block at CRLF; a bare LF or CR inside a line makes the line fail the name check.
private struct HeaderLines {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    mutating func next() -> Slice<UnsafeRawBufferPointer>? {
        var index = position
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") {
                let line = bytes[position..<index]
                position = index + 2
                return line
            }
            index += 1
        }
        return nil
    }
}

// MARK: Encoding

extension NATSHeaders {
    /// The block for HPUB. Throws for a name or value the block cannot carry.
    public func encoded() throws(CommandError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encode(into: &bytes)
        return bytes
    }

    /// Appends the block to `bytes`.
    public func encode(into bytes: inout [UInt8]) throws(CommandError) {
        bytes.append(contentsOf: "NATS/1.0".utf8)
        if let status {
            // Always three digits: a status of 3 read from `003` must be written as `003`.
            guard (0...999).contains(status) else { throw .invalidHeader("status \(status)") }
            bytes.append(UInt8(ascii: " "))
            for divisor in [100, 10, 1] { bytes.append(UInt8(ascii: "0") + UInt8(status / divisor % 10)) }
            if !statusDescription.isEmpty {
                guard !statusDescription.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else {
                    throw .invalidHeader(statusDescription)
                }
                bytes.append(UInt8(ascii: " "))
                bytes.append(contentsOf: statusDescription.utf8)
            }
        }
        bytes.append(contentsOf: [0x0D, 0x0A])
        for field in fields {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(Self.isNameByte),
                  !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else {
                throw .invalidHeader(field.name)
            }
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(contentsOf: [0x0D, 0x0A])
        }
        bytes.append(contentsOf: [0x0D, 0x0A])
    }
}
