/// request-line = method SP request-target SP HTTP-version (RFC 9112 §3), one byte at a time.
struct RequestLineParser: HTTPStartLineParsing {
    enum Part {
        case method
        case target
        case version
        case finished
    }

    private(set) var part = Part.method
    private(set) var method: [UInt8] = []
    private(set) var target: [UInt8] = []
    private var versionBytes: [UInt8] = []
    private(set) var version = HTTPVersion.http1_1

    mutating func consume(_ byte: UInt8) throws(HTTPParseError) {
        switch part {
        case .method:
            if byte == ASCII.space, !method.isEmpty {
                part = .target
            } else if HTTPSyntax.isTokenCharacter(byte) {
                method.append(byte)
            } else {
                throw HTTPParseError(.malformed, "malformed method in the request line")
            }
        case .target:
            if byte == ASCII.space, !target.isEmpty {
                part = .version
            } else if (0x21...0x7E).contains(byte) {
                target.append(byte)
            } else {
                throw HTTPParseError(.malformed, "malformed request target")
            }
        case .version:
            guard versionBytes.count < HTTPVersionSyntax.maximumLength else {
                throw HTTPParseError(.malformed, "malformed HTTP version in the request line")
            }
            versionBytes.append(byte)
        case .finished:
            fatalError("internal inconsistency in RequestLineParser: byte after the line ended")
        }
    }

    mutating func finish() throws(HTTPParseError) {
        guard part == .version, let parsed = HTTPVersionSyntax.parse(versionBytes) else {
            throw HTTPParseError(.malformed, "malformed request line")
        }
        guard parsed == .http1_1 || parsed == .http1_0 else {
            throw HTTPParseError(.unsupportedVersion, "only HTTP/1.1 is supported")
        }
        version = parsed
        part = .finished
    }
}
