// The PROXY protocol header parser, v1 and v2, sans-I/O.
//
// Theory of operation. A trusted proxy (HAProxy with `send-proxy-v2`, a cloud TCP load
// balancer) prepends one header to each connection, before any byte of the client's own, even
// before a TLS ClientHello. The receiver is told by configuration to expect it and must not
// guess (§2, §5), so the first byte decides: "P" starts a v1 text line, CR the v2 binary
// signature, anything else is refused at once.
//
// The parser is a state enum and a step function over single bytes: every byte is looked at
// exactly once and nothing consumed is parsed again. A v1 line is split into its fields as it
// arrives (each field is checked when the space or CR after it comes); v2 addresses are folded
// into integers byte by byte and TLVs are walked by their lengths without being stored, so the
// only buffer is one v1 field of at most 45 bytes. Limits are checked on the byte that would
// cross them: the v1 line's 107 bytes (§2.1), and a v2 length above `maximumV2Length` or too
// short for its addresses as soon as the length is known (§2.2).
//
// It stops exactly at the end of the header and reports how many bytes of the last piece it
// used; the rest belongs to the protocol behind it (TLS or HTTP). Partial headers are waited
// for (the specification recommends tolerance); `finish()` is the end of the stream.
//
// What it accepts, per the specification: v1 TCP4, TCP6 and UNKNOWN (whose rest of line is
// ignored); v2 LOCAL (the real endpoints count) and PROXY. PROXY over UNSPEC, UNIX or UDP is
// accepted as `.unknown` (§2.2 lets a receiver fall back to the real endpoints). TLVs must fit
// the announced length; PP2_TYPE_SSL is read for the client's TLS flag, the others skipped
// (PP2_TYPE_CRC32C is not verified: the header comes from a trusted peer).

/// Incremental parser for one connection's PROXY header. Used from that connection's queue only.
public struct ProxyHeaderParser: Sendable {
    public enum Progress: Sendable, Hashable {
        /// Every byte given was consumed and the header is not complete yet.
        case needsMoreData
        /// The header ended after `consumedBytes` bytes of this call's input; the rest was not
        /// looked at.
        case complete(ProxyHeader, consumedBytes: Int)
    }

    /// Longest v2 address block plus TLVs accepted. Addresses take at most 216 bytes and the
    /// TLVs proxies send (SSL details, ALPN, authority, a unique id, a cloud's endpoint id) a
    /// few hundred more; a header longer than 4 KiB is not one a proxy would send.
    public static let maximumV2Length = 4096
    /// Longest v1 field: an IPv6 address with an embedded IPv4 tail
    /// ("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255").
    static let maximumV1FieldLength = 45

    enum State {
        case start
        case v1Prefix(matched: Int)
        /// Reading field number `v1FieldIndex` (protocol, source, destination, ports) into `field`.
        case v1Field
        /// After "UNKNOWN": everything up to the CR is ignored (§2.1).
        case v1SkipToCR
        case v1LineFeed
        case v2Signature(matched: Int)
        case v2VersionAndCommand
        case v2FamilyAndTransport
        case v2LengthHigh
        case v2LengthLow(high: UInt8)
        case v2Addresses(offset: Int)
        case v2TLVType
        case v2TLVLengthHigh(type: UInt8)
        case v2TLVLengthLow(type: UInt8, high: UInt8)
        case v2TLVValue(type: UInt8, offset: Int, length: Int)
        /// Address information the header carries but we do not use (LOCAL, UNSPEC, UNIX, UDP).
        case v2Skip
        case complete
        case failed(ProxyHeaderError)
    }

    private var state = State.start
    private var version = ProxyHeader.Version.one
    // v1
    private var lineLength = 0
    private var field: [UInt8] = []
    private var v1FieldIndex = 0
    private var v1IsIPv6 = false
    private var isV1Unknown = false
    // v2
    private var command: UInt8 = 0
    private var family: UInt8 = 0
    private var transport: UInt8 = 0
    private var bodyLength = 0
    private var bodyOffset = 0
    private var usesAddresses = false
    // Both versions' results, filled in as they are read.
    private var sourceHigh: UInt64 = 0, sourceLow: UInt64 = 0
    private var destinationHigh: UInt64 = 0, destinationLow: UInt64 = 0
    private var source: IPAddress?
    private var destination: IPAddress?
    private var sourcePort: UInt16 = 0
    private var destinationPort: UInt16 = 0
    private var clientUsedTLS: Bool?

    public init() {}

    /// Consumes `bytes` up to the end of the header. After an error every further call throws
    /// the same error; calling again after `.complete` is a programming error.
    public mutating func parse(_ bytes: some Collection<UInt8>) throws(ProxyHeaderError) -> Progress {
        if case .failed(let error) = state { throw error }
        if case .complete = state { preconditionFailure("ProxyHeaderParser used after the header was complete") }
        var consumed = 0
        do {
            for byte in bytes {
                consumed += 1
                if try step(byte) { return .complete(makeHeader(), consumedBytes: consumed) }
            }
        } catch {
            state = .failed(error)
            throw error
        }
        return .needsMoreData
    }

    /// The end of the stream: throws unless the header was complete.
    public mutating func finish() throws(ProxyHeaderError) {
        switch state {
        case .complete: return
        case .failed(let error): throw error
        default:
            let error = ProxyHeaderError(.truncated, "the connection ended inside the PROXY header")
            state = .failed(error)
            throw error
        }
    }

    // MARK: The step function

    /// Moves the state on by one byte; true when that byte ended the header.
    private mutating func step(_ byte: UInt8) throws(ProxyHeaderError) -> Bool {
        switch state {
        case .start:
            if byte == ProxyWire.v1Prefix[0] {
                lineLength = 1
                state = .v1Prefix(matched: 1)
            } else if byte == ProxyWire.v2Signature[0] {
                version = .two
                state = .v2Signature(matched: 1)
            } else {
                throw ProxyHeaderError(.signature, "the connection does not start with a PROXY protocol header")
            }
            return false

        case .v1Prefix(let matched):
            try countLineByte()
            guard byte == ProxyWire.v1Prefix[matched] else {
                throw ProxyHeaderError(.signature, "the connection does not start with a PROXY protocol header")
            }
            if matched + 1 == ProxyWire.v1Prefix.count {
                field.reserveCapacity(Self.maximumV1FieldLength)
                state = .v1Field
            } else {
                state = .v1Prefix(matched: matched + 1)
            }
            return false

        case .v1Field:
            try countLineByte()
            switch byte {
            case UInt8(ascii: " "):
                try endV1Field(atEndOfLine: false)
            case UInt8(ascii: "\r"):
                try endV1Field(atEndOfLine: true)
                state = .v1LineFeed
            default:
                guard byte != UInt8(ascii: "\n") else { throw Self.lineError("a bare LF in the PROXY line") }
                guard field.count < Self.maximumV1FieldLength else { throw Self.lineError("a PROXY line field is too long") }
                field.append(byte)
            }
            return false

        case .v1SkipToCR:
            try countLineByte()
            if byte == UInt8(ascii: "\r") { state = .v1LineFeed }
            if byte == UInt8(ascii: "\n") { throw Self.lineError("a bare LF in the PROXY line") }
            return false

        case .v1LineFeed:
            try countLineByte()
            guard byte == UInt8(ascii: "\n") else { throw Self.lineError("the PROXY line's CR is not followed by LF") }
            state = .complete
            return true

        case .v2Signature(let matched):
            guard byte == ProxyWire.v2Signature[matched] else {
                throw ProxyHeaderError(.signature, "the connection does not start with a PROXY protocol header")
            }
            state = matched + 1 == ProxyWire.v2Signature.count ? .v2VersionAndCommand : .v2Signature(matched: matched + 1)
            return false

        case .v2VersionAndCommand:
            guard byte >> 4 == ProxyWire.v2Version else {
                throw ProxyHeaderError(.version, "PROXY header version \(byte >> 4); only 2 is defined")
            }
            command = byte & 0x0F
            guard command == ProxyWire.commandLocal || command == ProxyWire.commandProxy else {
                throw ProxyHeaderError(.command, "PROXY v2 command \(command) is neither LOCAL nor PROXY")
            }
            state = .v2FamilyAndTransport
            return false

        case .v2FamilyAndTransport:
            family = byte >> 4
            transport = byte & 0x0F
            guard family <= ProxyWire.familyUnix, transport <= ProxyWire.transportDatagram else {
                throw ProxyHeaderError(.addressFamily, "PROXY v2 family/transport byte 0x\(String(byte, radix: 16)) is undefined")
            }
            state = .v2LengthHigh
            return false

        case .v2LengthHigh:
            state = .v2LengthLow(high: byte)
            return false

        case .v2LengthLow(let high):
            bodyLength = Int(high) << 8 | Int(byte)
            guard bodyLength <= Self.maximumV2Length else {
                throw ProxyHeaderError(.length, "PROXY v2 length \(bodyLength) is above the \(Self.maximumV2Length) accepted")
            }
            let blockLength = ProxyWire.addressBlockLength(family: family)
            if command == ProxyWire.commandProxy, bodyLength < blockLength {
                throw ProxyHeaderError(.length, "PROXY v2 length \(bodyLength) is too short for the \(blockLength) bytes of addresses")
            }
            usesAddresses = command == ProxyWire.commandProxy && transport == ProxyWire.transportStream
                && (family == ProxyWire.familyInet || family == ProxyWire.familyInet6)
            state = usesAddresses ? .v2Addresses(offset: 0) : .v2Skip
            return endOfBodyReached()

        case .v2Addresses(let offset):
            bodyOffset += 1
            addAddressByte(byte, at: offset)
            if offset + 1 == ProxyWire.addressBlockLength(family: family) {
                finishAddresses()
                state = .v2TLVType
            } else {
                state = .v2Addresses(offset: offset + 1)
            }
            return endOfBodyReached()

        case .v2TLVType:
            bodyOffset += 1
            guard bodyLength - bodyOffset + 1 >= ProxyWire.tlvHeaderLength else {
                throw ProxyHeaderError(.length, "a PROXY v2 TLV is cut off by the header's length")
            }
            state = .v2TLVLengthHigh(type: byte)
            return false

        case .v2TLVLengthHigh(let type):
            bodyOffset += 1
            state = .v2TLVLengthLow(type: type, high: byte)
            return false

        case .v2TLVLengthLow(let type, let high):
            bodyOffset += 1
            let length = Int(high) << 8 | Int(byte)
            guard length <= bodyLength - bodyOffset else {
                throw ProxyHeaderError(.length, "a PROXY v2 TLV of \(length) bytes overruns the header's length")
            }
            if type == ProxyWire.typeSSL, length < ProxyWire.sslValueMinimumLength {
                throw ProxyHeaderError(.length, "a PROXY v2 SSL TLV of \(length) bytes is shorter than its fixed fields")
            }
            state = length == 0 ? .v2TLVType : .v2TLVValue(type: type, offset: 0, length: length)
            return endOfBodyReached()

        case .v2TLVValue(let type, let offset, let length):
            bodyOffset += 1
            if type == ProxyWire.typeSSL, offset == 0 { clientUsedTLS = byte & ProxyWire.clientSSLFlag != 0 }
            state = offset + 1 == length ? .v2TLVType : .v2TLVValue(type: type, offset: offset + 1, length: length)
            return endOfBodyReached()

        case .v2Skip:
            bodyOffset += 1
            return endOfBodyReached()

        case .complete, .failed:
            fatalError("internal inconsistency in ProxyHeaderParser: step after the end")
        }
    }

    // MARK: v1 fields

    private mutating func countLineByte() throws(ProxyHeaderError) {
        lineLength += 1
        guard lineLength <= ProxyWire.v1MaximumLineLength else {
            throw Self.lineError("no CRLF within the \(ProxyWire.v1MaximumLineLength) bytes a PROXY line may take")
        }
    }

    private static func lineError(_ message: String) -> ProxyHeaderError {
        ProxyHeaderError(.line, message)
    }

    /// Checks the field just ended by a space or (with `atEndOfLine`) the CR.
    private mutating func endV1Field(atEndOfLine: Bool) throws(ProxyHeaderError) {
        defer { field.removeAll(keepingCapacity: true) }
        let index = v1FieldIndex
        v1FieldIndex += 1
        switch index {
        case 0:
            if field.elementsEqual("UNKNOWN".utf8) {
                isV1Unknown = true
                if !atEndOfLine { state = .v1SkipToCR }
                return
            }
            guard !atEndOfLine else { throw Self.lineError("the PROXY line ends after its protocol") }
            if field.elementsEqual("TCP4".utf8) {
                v1IsIPv6 = false
            } else if field.elementsEqual("TCP6".utf8) {
                v1IsIPv6 = true
            } else {
                throw Self.lineError("PROXY line protocol '\(Self.printable(field))' is not TCP4, TCP6 or UNKNOWN")
            }
        case 1, 2:
            guard !atEndOfLine else { throw Self.lineError("the PROXY line ends before its ports") }
            guard let address = IPAddress(parsing: field[...]), (address.family == .v6) == v1IsIPv6 else {
                throw Self.lineError("'\(Self.printable(field))' is not an \(v1IsIPv6 ? "IPv6" : "IPv4") address")
            }
            if index == 1 { source = address } else { destination = address }
        case 3:
            guard !atEndOfLine else { throw Self.lineError("the PROXY line ends before its destination port") }
            sourcePort = try Self.port(field)
        case 4:
            guard atEndOfLine else { throw Self.lineError("the PROXY line goes on after its destination port") }
            destinationPort = try Self.port(field)
        default:
            fatalError("internal inconsistency in ProxyHeaderParser: v1 field \(index)")
        }
    }

    /// 0...65535 in decimal without leading zeros (§2.1).
    private static func port(_ digits: [UInt8]) throws(ProxyHeaderError) -> UInt16 {
        var value = 0
        guard !digits.isEmpty, digits.count <= 5, digits.count == 1 || digits[0] != UInt8(ascii: "0") else {
            throw lineError("'\(printable(digits))' is not a port")
        }
        for byte in digits {
            guard let digit = IPAddressText.decimalDigit(byte) else { throw lineError("'\(printable(digits))' is not a port") }
            value = value * 10 + Int(digit)
        }
        guard value <= 65535 else { throw lineError("port \(value) is above 65535") }
        return UInt16(value)
    }

    /// A field for an error message, with anything unprintable shown as `?`.
    private static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.map { (0x21...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    // MARK: v2 body

    private mutating func addAddressByte(_ byte: UInt8, at offset: Int) {
        let size = family == ProxyWire.familyInet ? 4 : 16
        switch offset {
        case ..<size:
            if offset < 8 && size == 16 { sourceHigh = sourceHigh << 8 | UInt64(byte) } else { sourceLow = sourceLow << 8 | UInt64(byte) }
        case ..<(2 * size):
            if offset - size < 8 && size == 16 {
                destinationHigh = destinationHigh << 8 | UInt64(byte)
            } else {
                destinationLow = destinationLow << 8 | UInt64(byte)
            }
        case ..<(2 * size + 2):
            sourcePort = sourcePort << 8 | UInt16(byte)
        default:
            destinationPort = destinationPort << 8 | UInt16(byte)
        }
    }

    private mutating func finishAddresses() {
        if family == ProxyWire.familyInet {
            source = IPAddress(ipv4: UInt32(truncatingIfNeeded: sourceLow))
            destination = IPAddress(ipv4: UInt32(truncatingIfNeeded: destinationLow))
        } else {
            source = IPAddress(ipv6High: sourceHigh, low: sourceLow)
            destination = IPAddress(ipv6High: destinationHigh, low: destinationLow)
        }
    }

    /// True (and the state complete) once the body's announced length has been read; only ever
    /// reached between TLVs, since a TLV that would cross it is refused when its length is read.
    private mutating func endOfBodyReached() -> Bool {
        guard bodyOffset == bodyLength else { return false }
        switch state {
        case .v2Addresses, .v2TLVLengthHigh, .v2TLVLengthLow, .v2TLVValue:
            fatalError("internal inconsistency in ProxyHeaderParser: the body ended inside a field")
        default:
            state = .complete
            return true
        }
    }

    // MARK: Result

    private func makeHeader() -> ProxyHeader {
        if version == .one {
            guard !isV1Unknown, let source, let destination else { return ProxyHeader(version: .one, addresses: .unknown) }
            return ProxyHeader(version: .one, addresses: .tcp(source: source, sourcePort: sourcePort,
                                                              destination: destination, destinationPort: destinationPort))
        }
        if command == ProxyWire.commandLocal { return ProxyHeader(version: .two, addresses: .local, clientUsedTLS: clientUsedTLS) }
        guard usesAddresses, let source, let destination else {
            return ProxyHeader(version: .two, addresses: .unknown, clientUsedTLS: clientUsedTLS)
        }
        return ProxyHeader(version: .two, addresses: .tcp(source: source, sourcePort: sourcePort,
                                                          destination: destination, destinationPort: destinationPort),
                           clientUsedTLS: clientUsedTLS)
    }
}
