import Testing
@testable import Forwarding

@Suite struct ProxyHeaderParserTests {
    static let httpRequest = bytes("GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")
    static let clientHello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03]

    func address(_ text: String) -> IPAddress { IPAddress(text)! }

    // MARK: v1

    @Test func readsAV1TCP4LineInEverySplitAndLeavesWhatFollows() {
        let outcome = verifyDripFeed(bytes("PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\r\n") + Self.httpRequest)
        #expect(outcome == .complete(ProxyHeader(version: .one, addresses: .tcp(
            source: address("192.0.2.7"), sourcePort: 56324, destination: address("198.51.100.1"), destinationPort: 443)),
                                     rest: Self.httpRequest))
    }

    @Test func readsAV1TCP6LineOfTheLongestLength() {
        let longest = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
        let line = "PROXY TCP6 \(longest) \(longest) 65535 65535\r\n"
        #expect(line.utf8.count == 104)
        let outcome = verifyDripFeed(bytes(line) + Self.clientHello)
        #expect(outcome == .complete(ProxyHeader(version: .one, addresses: .tcp(
            source: address(longest), sourcePort: 65535, destination: address(longest), destinationPort: 65535)),
                                     rest: Self.clientHello))
    }

    @Test func readsV1TCP6WithCompressedAndMappedAddresses() {
        let outcome = verifyDripFeed(bytes("PROXY TCP6 2001:db8::7 ::ffff:198.51.100.1 0 8080\r\n"))
        #expect(outcome == .complete(ProxyHeader(version: .one, addresses: .tcp(
            source: address("2001:db8::7"), sourcePort: 0, destination: address("::ffff:198.51.100.1"), destinationPort: 8080)),
                                     rest: []))
    }

    @Test(arguments: ["PROXY UNKNOWN\r\n",
                      "PROXY UNKNOWN ffff:f:f:f:f:f:f:ffff ffff:f:f:f:f:f:f:ffff 65535 65535\r\n",
                      "PROXY UNKNOWN whatever is here is ignored\r\n"])
    func acceptsV1UnknownIgnoringTheRestOfTheLine(line: String) {
        #expect(verifyDripFeed(bytes(line) + [0x16]) == .complete(ProxyHeader(version: .one, addresses: .unknown), rest: [0x16]))
    }

    @Test func acceptsTheWorstCaseV1LineOf107BytesAndRefusesOneMore() {
        let longest = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
        let line = "PROXY UNKNOWN \(longest) \(longest) 65535 65535\r\n"
        #expect(line.utf8.count == 107)
        #expect(verifyDripFeed(bytes(line)).header?.addresses == .unknown)
        let tooLong = "PROXY UNKNOWN \(longest) \(longest) 65535 655355\r\n"
        #expect(verifyDripFeed(bytes(tooLong)) == .failed(.line))
    }

    @Test(arguments: [
        "PROXY TCP4  192.0.2.7 198.51.100.1 1 2\r\n",        // two spaces
        "PROXY tcp4 192.0.2.7 198.51.100.1 1 2\r\n",         // the protocol is case-sensitive
        "PROXY TCP5 192.0.2.7 198.51.100.1 1 2\r\n",
        "PROXY TCP4 192.0.2.07 198.51.100.1 1 2\r\n",        // leading zero (octal?)
        "PROXY TCP4 192.0.2.256 198.51.100.1 1 2\r\n",
        "PROXY TCP4 2001:db8::1 198.51.100.1 1 2\r\n",       // the family says IPv4
        "PROXY TCP6 192.0.2.7 2001:db8::1 1 2\r\n",          // the family says IPv6
        "PROXY TCP4 192.0.2.7 198.51.100.1 01 2\r\n",        // leading zero in a port
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 65536\r\n",
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 -2\r\n",
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 2 \r\n",        // a trailing space
        "PROXY TCP4 192.0.2.7 198.51.100.1 1\r\n",           // a missing port
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 2\n",           // a bare LF
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 2\rX",          // CR without LF
        "PROXY TCP4\r\n",
        "PROXY UNKNOWN\n",
        "PROXY \r\n",
        "PROXY TCP4 192.0.2.7 198.51.100.1 1 2 2001:db8:1:2:3:4:5:6:7:8:9:10:11:12\r\n",
    ])
    func refusesAV1LineThatDoesNotMatchExactly(line: String) {
        #expect(verifyDripFeed(bytes(line)) == .failed(.line), "\(line.debugDescription)")
    }

    @Test func refusesAV1LineWithoutCRLFWithin107Bytes() {
        #expect(verifyDripFeed(bytes("PROXY UNKNOWN " + String(repeating: "x", count: 200))) == .failed(.line))
    }

    // MARK: v2

    @Test func readsAV2ProxyHeaderForTCPOverIPv4() {
        let header = v2Header(familyAndTransport: 0x11, body: [192, 0, 2, 7, 198, 51, 100, 1, 0xDC, 0x04, 0x01, 0xBB])
        let outcome = verifyDripFeed(header + Self.clientHello)
        #expect(outcome == .complete(ProxyHeader(version: .two, addresses: .tcp(
            source: address("192.0.2.7"), sourcePort: 56324, destination: address("198.51.100.1"), destinationPort: 443)),
                                     rest: Self.clientHello))
    }

    @Test func readsAV2ProxyHeaderForTCPOverIPv6() {
        let source: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [0x07]
        let destination: [UInt8] = [UInt8](repeating: 0, count: 15) + [1]
        let header = v2Header(familyAndTransport: 0x21, body: source + destination + [0x30, 0x39, 0x1F, 0x90])
        #expect(verifyDripFeed(header) == .complete(ProxyHeader(version: .two, addresses: .tcp(
            source: address("2001:db8::7"), sourcePort: 12345, destination: address("::1"), destinationPort: 8080)), rest: []))
    }

    @Test func readsTheClientsTLSFlagFromTheSSLTLVAndSkipsTheOthers() {
        let addresses: [UInt8] = [192, 0, 2, 7, 198, 51, 100, 1, 0, 80, 0, 81]
        let ssl = tlv(0x20, [0x01, 0, 0, 0, 0] + tlv(0x21, bytes("TLSv1.3")))
        let body = addresses + tlv(0x01, bytes("h2")) + tlv(0x04, []) + ssl + tlv(0xEA, bytes("vpce-0123"))
        let outcome = verifyDripFeed(v2Header(familyAndTransport: 0x11, body: body) + Self.httpRequest)
        #expect(outcome.header?.clientUsedTLS == true)
        guard case .complete(_, let rest) = outcome else { return }
        #expect(rest == Self.httpRequest)
        let plain = tlv(0x20, [0x00, 0, 0, 0, 0])
        #expect(verifyDripFeed(v2Header(familyAndTransport: 0x11, body: addresses + plain)).header?.clientUsedTLS == false)
        #expect(verifyDripFeed(v2Header(familyAndTransport: 0x11, body: addresses)).header?.clientUsedTLS == nil)
    }

    @Test func aLocalHeaderIsTheProxysOwnConnectionWhateverItCarries() {
        #expect(verifyDripFeed(v2Header(command: 0x0, familyAndTransport: 0x00, body: [])) ==
                .complete(ProxyHeader(version: .two, addresses: .local), rest: []))
        // The length must be honoured even for LOCAL: the bytes are skipped, not taken as data.
        let carried = v2Header(command: 0x0, familyAndTransport: 0x11, body: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        #expect(verifyDripFeed(carried + [0x16]) == .complete(ProxyHeader(version: .two, addresses: .local), rest: [0x16]))
    }

    @Test(arguments: [(UInt8(0x00), 0), (0x12, 12), (0x22, 36), (0x31, 216), (0x32, 216)])
    func aProxyHeaderForWhatWeDoNotServeRelaysAnUnknownClient(familyAndTransport: UInt8, length: Int) {
        let header = v2Header(familyAndTransport: familyAndTransport, body: [UInt8](repeating: 7, count: length))
        #expect(verifyDripFeed(header + [1]) == .complete(ProxyHeader(version: .two, addresses: .unknown), rest: [1]))
    }

    @Test(arguments: [
        (v2Header(familyAndTransport: 0x11, body: []).replacing(at: 12, with: 0x10), ProxyHeaderError.Kind.version),
        (v2Header(familyAndTransport: 0x11, body: []).replacing(at: 12, with: 0x31), .version),
        (v2Header(familyAndTransport: 0x11, body: []).replacing(at: 12, with: 0x22), .command),
        (v2Header(familyAndTransport: 0x41, body: []), .addressFamily),
        (v2Header(familyAndTransport: 0x13, body: []), .addressFamily),
        // Too short for the addresses the family announces.
        (v2Header(familyAndTransport: 0x11, body: [UInt8](repeating: 0, count: 11)), .length),
        (v2Header(familyAndTransport: 0x21, body: [UInt8](repeating: 0, count: 12)), .length),
        (v2Header(familyAndTransport: 0x31, body: [UInt8](repeating: 0, count: 36)), .length),
        // Longer than any proxy sends.
        (v2Header(familyAndTransport: 0x11, body: [], declaredLength: 0xFFFF), .length),
        // A TLV longer than what is left of the header, and one cut off inside its own length.
        (v2Header(familyAndTransport: 0x11, body: [UInt8](repeating: 0, count: 12) + [0x01, 0x00, 0x05, 1, 2]), .length),
        (v2Header(familyAndTransport: 0x11, body: [UInt8](repeating: 0, count: 12) + [0x01, 0x00]), .length),
        (v2Header(familyAndTransport: 0x11, body: [UInt8](repeating: 0, count: 12) + tlv(0x20, [1, 0])), .length),
        (bytes("\r\n\r\n\0\r\nQUIT\r"), .signature),
    ])
    func refusesABadV2Header(header: [UInt8], kind: ProxyHeaderError.Kind) {
        #expect(verifyDripFeed(header) == .failed(kind))
    }

    // MARK: Neither

    @Test(arguments: [bytes("GET /ws HTTP/1.1\r\n"), [0x16, 0x03, 0x01], bytes("PROXZ TCP4"), bytes("proxy TCP4"),
                      bytes(" PROXY"), [0x00], bytes("\r\n\r\n\r\n")])
    func refusesAnythingButASignatureAtItsFirstWrongByte(input: [UInt8]) {
        #expect(verifyDripFeed(input) == .failed(.signature))
    }

    @Test func aStreamEndingInsideTheHeaderIsTruncatedAtEveryLength() {
        let v1 = bytes("PROXY TCP4 192.0.2.7 198.51.100.1 56324 443\r\n")
        let v2 = v2Header(familyAndTransport: 0x11, body: [192, 0, 2, 7, 198, 51, 100, 1, 0, 80, 0, 81] + tlv(0x04, [0, 0]))
        for header in [v1, v2] {
            for length in 0..<header.count {
                var parser = ProxyHeaderParser()
                #expect((try? parser.parse(header[..<length])) == .needsMoreData)
                #expect(throws: ProxyHeaderError(.truncated, "the connection ended inside the PROXY header")) { try parser.finish() }
            }
            var complete = ProxyHeaderParser()
            _ = try? complete.parse(header)
            #expect(throws: Never.self) { try complete.finish() }
        }
    }
}

extension Array where Element == UInt8 {
    func replacing(at index: Int, with byte: UInt8) -> [UInt8] {
        var copy = self
        copy[index] = byte
        return copy
    }
}
