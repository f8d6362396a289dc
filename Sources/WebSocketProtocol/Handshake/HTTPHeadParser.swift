// The byte-at-a-time engine under HTTPRequestParser and HTTPResponseParser.
//
// Each byte is looked at exactly once, in `consume(_:)`, and moves `state` forward. The start
// line is handed byte by byte to a `StartLine` parser (request line or status line); field
// lines are split into name and value as they arrive, so nothing is ever re-scanned and the
// only buffering is the current field's name and value. Every limit is checked on the byte
// that would cross it.
//
// Strictness, deliberately: lines end in CRLF only (a bare LF or bare CR is 400 — lenient LF
// handling is how request smuggling starts); obs-fold and whitespace before the first field
// are 400 (RFC 9112 §5.2, §2.2); whitespace between a field name and its colon is 400
// (RFC 9112 §5.1); NUL and other controls anywhere are 400; empty lines before the request
// line are not skipped.

/// Parses a start line byte by byte. Never sees CR or LF.
protocol HTTPStartLineParsing: Sendable {
    mutating func consume(_ byte: UInt8) throws(HTTPParseError)
    /// Called at the CR that ends the line.
    mutating func finish() throws(HTTPParseError)
}

struct HTTPHeadParser<StartLine: HTTPStartLineParsing>: Sendable {
    enum State {
        case startLine
        case startLineCR
        case lineStart
        case name
        case valueLeadingWhitespace
        case value
        case fieldLineCR
        case finalCR
        case finished
    }

    enum Event {
        case none
        /// A field line ended; it is `fields.last`.
        case fieldComplete
        case headComplete
    }

    private(set) var state = State.startLine
    var startLine: StartLine
    private(set) var fields: [HTTPField] = []
    private let limits: HTTPParserLimits
    private var startLineLength = 0
    private var headerBlockSize = 0
    private var name: [UInt8] = []
    private var value: [UInt8] = []
    /// Length of `value` without trailing whitespace, which is not part of the value.
    private var trimmedValueLength = 0

    init(startLine: StartLine, limits: HTTPParserLimits) {
        self.startLine = startLine
        self.limits = limits
    }

    mutating func consume(_ byte: UInt8) throws(HTTPParseError) -> Event {
        switch state {
        case .startLine:
            if byte == ASCII.carriageReturn {
                try startLine.finish()
                state = .startLineCR
            } else if byte == ASCII.lineFeed {
                throw HTTPParseError(.malformed, "start line ends in a bare LF")
            } else {
                startLineLength += 1
                if startLineLength > limits.maximumStartLineLength {
                    throw HTTPParseError(.startLineTooLong,
                                         "start line longer than \(limits.maximumStartLineLength) bytes")
                }
                try startLine.consume(byte)
            }
            return .none
        case .startLineCR:
            guard byte == ASCII.lineFeed else { throw HTTPParseError(.malformed, "start line has a bare CR") }
            state = .lineStart
            return .none
        case .finished:
            fatalError("internal inconsistency in HTTPHeadParser: byte consumed after the head")
        default:
            break
        }

        headerBlockSize += 1
        if headerBlockSize > limits.maximumHeaderBlockSize {
            throw HTTPParseError(.headerBlockTooLarge, "header block larger than \(limits.maximumHeaderBlockSize) bytes")
        }

        switch state {
        case .lineStart:
            if byte == ASCII.carriageReturn {
                state = .finalCR
            } else if HTTPSyntax.isTokenCharacter(byte) {
                if fields.count >= limits.maximumHeaderCount {
                    throw HTTPParseError(.tooManyHeaders, "more than \(limits.maximumHeaderCount) header fields")
                }
                name.append(byte)
                state = .name
            } else if HTTPSyntax.isWhitespace(byte) {
                throw HTTPParseError(.malformed, fields.isEmpty
                                     ? "whitespace before the first header field"
                                     : "obsolete line folding is not accepted")
            } else if byte == ASCII.lineFeed {
                throw HTTPParseError(.malformed, "header line ends in a bare LF")
            } else {
                throw HTTPParseError(.malformed, "invalid character in a header field name")
            }
        case .name:
            if byte == ASCII.colon {
                state = .valueLeadingWhitespace
            } else if HTTPSyntax.isTokenCharacter(byte) {
                name.append(byte)
            } else if HTTPSyntax.isWhitespace(byte) {
                throw HTTPParseError(.malformed, "whitespace between a header field name and its colon")
            } else {
                throw HTTPParseError(.malformed, "invalid character in a header field name")
            }
        case .valueLeadingWhitespace:
            if HTTPSyntax.isWhitespace(byte) {
                break
            } else if byte == ASCII.carriageReturn {
                state = .fieldLineCR
            } else if HTTPSyntax.isFieldValueCharacter(byte) {
                value.append(byte)
                trimmedValueLength = value.count
                state = .value
            } else {
                throw invalidValueByte(byte)
            }
        case .value:
            if byte == ASCII.carriageReturn {
                state = .fieldLineCR
            } else if HTTPSyntax.isFieldValueCharacter(byte) {
                value.append(byte)
                trimmedValueLength = value.count
            } else if HTTPSyntax.isWhitespace(byte) {
                value.append(byte)
            } else {
                throw invalidValueByte(byte)
            }
        case .fieldLineCR:
            guard byte == ASCII.lineFeed else { throw HTTPParseError(.malformed, "header line has a bare CR") }
            fields.append(HTTPField(name: String(decoding: name, as: UTF8.self),
                                    value: String(decoding: value.prefix(trimmedValueLength), as: UTF8.self)))
            name.removeAll(keepingCapacity: true)
            value.removeAll(keepingCapacity: true)
            trimmedValueLength = 0
            state = .lineStart
            return .fieldComplete
        case .finalCR:
            guard byte == ASCII.lineFeed else { throw HTTPParseError(.malformed, "header block ends in a bare CR") }
            state = .finished
            return .headComplete
        case .startLine, .startLineCR, .finished:
            fatalError("internal inconsistency in HTTPHeadParser: start-line state in the header block")
        }
        return .none
    }

    private func invalidValueByte(_ byte: UInt8) -> HTTPParseError {
        byte == ASCII.lineFeed
            ? HTTPParseError(.malformed, "header line ends in a bare LF")
            : HTTPParseError(.malformed, "control character in a header field value")
    }
}

/// Parses "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3) from bytes collected by a start-line parser.
enum HTTPVersionSyntax {
    static let maximumLength = 8

    static func parse(_ bytes: [UInt8]) -> HTTPVersion? {
        guard bytes.count == maximumLength, bytes.starts(with: Array("HTTP/".utf8)),
              HTTPSyntax.isDigit(bytes[5]), bytes[6] == UInt8(ascii: "."), HTTPSyntax.isDigit(bytes[7])
        else { return nil }
        return HTTPVersion(major: Int(bytes[5] - UInt8(ascii: "0")), minor: Int(bytes[7] - UInt8(ascii: "0")))
    }
}
