/// status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 §4), one byte at
/// a time. A missing SP after the code is tolerated, as RFC 9112 §4 suggests for clients.
struct StatusLineParser: HTTPStartLineParsing {
    enum Part {
        case version
        case status
        case reason
        case finished
    }

    private(set) var part = Part.version
    private var versionBytes: [UInt8] = []
    private var statusDigits = 0
    private(set) var status = 0
    private(set) var reason: [UInt8] = []
    private(set) var version = HTTPVersion.http1_1

    mutating func consume(_ byte: UInt8) throws(HTTPParseError) {
        switch part {
        case .version:
            if byte == ASCII.space {
                guard let parsed = HTTPVersionSyntax.parse(versionBytes) else {
                    throw HTTPParseError(.malformed, "malformed HTTP version in the status line")
                }
                guard parsed == .http1_1 else {
                    throw HTTPParseError(.unsupportedVersion, "only HTTP/1.1 is supported")
                }
                version = parsed
                part = .status
            } else if versionBytes.count < HTTPVersionSyntax.maximumLength {
                versionBytes.append(byte)
            } else {
                throw HTTPParseError(.malformed, "malformed HTTP version in the status line")
            }
        case .status:
            if statusDigits == 3, byte == ASCII.space {
                part = .reason
            } else if statusDigits < 3, HTTPSyntax.isDigit(byte) {
                status = status * 10 + Int(byte - UInt8(ascii: "0"))
                statusDigits += 1
            } else {
                throw HTTPParseError(.malformed, "malformed status code")
            }
        case .reason:
            guard HTTPSyntax.isWhitespace(byte) || HTTPSyntax.isFieldValueCharacter(byte) else {
                throw HTTPParseError(.malformed, "control character in the reason phrase")
            }
            reason.append(byte)
        case .finished:
            fatalError("internal inconsistency in StatusLineParser: byte after the line ended")
        }
    }

    mutating func finish() throws(HTTPParseError) {
        guard part == .reason || (part == .status && statusDigits == 3) else {
            throw HTTPParseError(.malformed, "malformed status line")
        }
        part = .finished
    }
}
