// A strict RFC 8259 parser over UTF-8 bytes.
//
// Strict because the peer is untrusted: no comments, no trailing commas, no NaN, no lone
// surrogates, no duplicate keys, a nesting limit so a hostile document cannot exhaust the stack,
// and an error that says where parsing stopped. The input is already validated UTF-8 (the
// WebSocket layer rejects invalid text frames), but the parser does not rely on it.

public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

public struct JSONParser {
    /// Deep enough for every protocol message (they nest three or four levels), shallow enough
    /// that recursion stays far from the stack limit on any thread.
    public static let defaultMaximumDepth = 32

    public static func parse(_ bytes: UnsafeRawBufferPointer,
                             maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == bytes.count else { throw parser.error("unexpected data after the document") }
        return value
    }

    public static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer, maximumDepth: maximumDepth) }
        }
        return try result.get()
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private let bytes: UnsafeRawBufferPointer
    private let maximumDepth: Int
    private var offset = 0

    private init(bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: offset) }

    private var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of document") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw error("unexpected end of document") }
        for index in 0..<count where bytes[offset + index] != literal.utf8Start[index] {
            throw error("invalid literal")
        }
        offset += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw error("nesting deeper than \(maximumDepth)") }
        offset += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") { offset += 1; return .object([:]) }
        // Room for a typical request's members up front, instead of growing 1, 2, 4, 8.
        var members = [String: JSONValue](minimumCapacity: 8)
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let keyOffset = offset
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            offset += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            guard members.updateValue(value, forKey: key) == nil else {
                throw JSONParseError(message: "duplicate key \"\(key)\"", offset: keyOffset)
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"): offset += 1; return .object(members)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw error("nesting deeper than \(maximumDepth)") }
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { offset += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"): offset += 1; return .array(elements)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = offset
        var isIntegral = true
        if current == UInt8(ascii: "-") { offset += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("invalid number")
        }
        if first == UInt8(ascii: "0") {
            offset += 1
        } else {
            while let digit = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) { offset += 1 }
        }
        if current == UInt8(ascii: ".") {
            isIntegral = false
            offset += 1
            guard try skipDigits() > 0 else { throw error("invalid number: digits expected after '.'") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isIntegral = false
            offset += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
            guard try skipDigits() > 0 else { throw error("invalid number: digits expected in exponent") }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isIntegral, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else {
            throw JSONParseError(message: "number out of range", offset: start)
        }
        return .double(double)
    }

    private mutating func skipDigits() throws(JSONParseError) -> Int {
        let start = offset
        while let digit = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) { offset += 1 }
        return offset - start
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        let start = offset
        var runStart = offset
        var hasEscapes = false
        while true {
            guard let byte = current else { throw error("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                if !hasEscapes, Self.isASCII(UnsafeRawBufferPointer(rebasing: bytes[start..<offset])) {
                    // The common case: plain ASCII without escapes is valid as it stands.
                    let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                    offset += 1
                    return text
                }
                try appendRun(from: runStart, to: &scalars)
                offset += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                hasEscapes = true
                try appendRun(from: runStart, to: &scalars)
                offset += 1
                scalars.append(try parseEscape())
                runStart = offset
            case 0x00..<0x20:
                throw error("control character in string")
            default:
                offset += 1
            }
        }
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var combined: UInt8 = 0
        for byte in bytes { combined |= byte }
        return combined < 0x80
    }

    /// Appends the unescaped bytes `runStart..<offset`, validating them as UTF-8.
    private func appendRun(from runStart: Int, to scalars: inout String.UnicodeScalarView) throws(JSONParseError) {
        guard runStart < offset else { return }
        let run = UnsafeRawBufferPointer(rebasing: bytes[runStart..<offset])
        var decoder = UTF8()
        var iterator = run.makeIterator()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error: throw JSONParseError(message: "invalid UTF-8 in string", offset: runStart)
            }
        }
    }

    private mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        guard let byte = current else { throw error("unterminated escape") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try parseHexQuad()
            if (0xD800..<0xDC00).contains(unit) {
                guard current == UInt8(ascii: "\\"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "u")
                else { throw error("lone high surrogate") }
                offset += 2
                let low = try parseHexQuad()
                guard (0xDC00..<0xE000).contains(low) else { throw error("invalid low surrogate") }
                let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw error("invalid surrogate pair") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(UInt32(unit)) else { throw error("lone low surrogate") }
            return scalar
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHexQuad() throws(JSONParseError) -> UInt16 {
        guard offset + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt16(digit)
            offset += 1
        }
        return value
    }
}
