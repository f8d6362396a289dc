// Encoding and decoding of relay envelopes (the layout is in RelayFrame.swift).
//
// Decoding reads one whole NATS payload: a relay message is never split, so there is no
// streaming state. Every length is checked against what remains before it is used, a count of
// connections is checked against the bytes it needs, and any inconsistency is a
// `RelayProtocolError` for the whole envelope (the receiver drops it and counts it).

/// Frame kinds on the wire.
enum RelayFrameKind: UInt8 {
    case open = 1
    case message = 2
    case close = 3
    case alive = 4
    case deliver = 5
    case closeConnection = 6

    func travels(_ direction: RelayDirection) -> Bool {
        switch self {
        case .open, .message, .close: direction == .toOwner
        case .deliver, .closeConnection: direction == .toGateway
        case .alive: true
        }
    }
}

public enum RelayCodec {
    static let magic: [UInt8] = [0x42, 0x52]   // "BR"
    static let version: UInt8 = 1
    /// Flags of an `open` frame's client.
    static let identifiedFlag: UInt8 = 0x01
    static let usedTLSFlag: UInt8 = 0x02
    /// RFC 6455 §5.5.1: a close frame's payload is at most 125 bytes, 2 of them the code.
    public static let maxCloseReasonBytes = 123
    public static let maxNodeIDBytes = 64
    /// The longest address text: an IPv6 address with a zone is far shorter.
    static let maxAddressBytes = 64

    /// Bytes an envelope takes before its frames.
    public static func headerSize(sender: String) -> Int { 2 + 1 + 1 + sender.utf8.count + 8 }

    /// Bytes a frame takes on the wire, for callers that cap the size of a batch.
    public static func size(of frame: RelayFrame) -> Int {
        switch frame {
        case .open(_, let client): 1 + 8 + 1 + 1 + client.address.utf8.count
        case .message(_, let text): 1 + 8 + 4 + text.count
        case .close: 1 + 8
        case .alive(let connections): 1 + 4 + 8 * connections.count
        case .deliver(let connections, let text): 1 + 2 + 8 * connections.count + 4 + text.count
        case .closeConnection(_, _, let reason): 1 + 8 + 2 + 1 + reason.utf8.count
        }
    }

    /// The most connections one `deliver` frame names.
    public static let maxDeliverRecipients = Int(UInt16.max)

    // MARK: Encoding

    /// Encodes the header of an envelope; frames are then appended with `append(_:to:)`.
    /// Preconditions (caller misuse, never the peer's input): a valid node id.
    public static func startEnvelope(sender: String, incarnation: UInt64, into bytes: inout [UInt8]) {
        precondition(isValidNodeID(sender.utf8), "invalid relay node id \(sender)")
        bytes += magic
        bytes.append(version)
        bytes.append(UInt8(sender.utf8.count))
        bytes += sender.utf8
        appendInteger(incarnation, to: &bytes)
    }

    public static func append(_ frame: RelayFrame, to bytes: inout [UInt8]) {
        switch frame {
        case .open(let connection, let client):
            precondition(client.address.utf8.count <= maxAddressBytes, "relay client address too long")
            bytes.append(RelayFrameKind.open.rawValue)
            appendInteger(connection, to: &bytes)
            bytes.append((client.isIdentified ? identifiedFlag : 0) | (client.usedTLS ? usedTLSFlag : 0))
            bytes.append(UInt8(client.address.utf8.count))
            bytes += client.address.utf8
        case .message(let connection, let text):
            bytes.append(RelayFrameKind.message.rawValue)
            appendInteger(connection, to: &bytes)
            appendInteger(UInt32(text.count), to: &bytes)
            bytes += text
        case .close(let connection):
            bytes.append(RelayFrameKind.close.rawValue)
            appendInteger(connection, to: &bytes)
        case .alive(let connections):
            bytes.append(RelayFrameKind.alive.rawValue)
            appendInteger(UInt32(connections.count), to: &bytes)
            for connection in connections { appendInteger(connection, to: &bytes) }
        case .deliver(let connections, let text):
            precondition(!connections.isEmpty && connections.count <= maxDeliverRecipients, "a deliver names 1...65535 connections")
            bytes.append(RelayFrameKind.deliver.rawValue)
            appendInteger(UInt16(connections.count), to: &bytes)
            for connection in connections { appendInteger(connection, to: &bytes) }
            appendInteger(UInt32(text.count), to: &bytes)
            bytes += text
        case .closeConnection(let connection, let code, let reason):
            let reasonBytes = truncatedReason(reason)
            bytes.append(RelayFrameKind.closeConnection.rawValue)
            appendInteger(connection, to: &bytes)
            appendInteger(code, to: &bytes)
            bytes.append(UInt8(reasonBytes.count))
            bytes += reasonBytes
        }
    }

    /// One envelope with `frames`.
    public static func encode(_ envelope: RelayEnvelope) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize(sender: envelope.sender) + envelope.frames.reduce(0) { $0 + size(of: $1) })
        startEnvelope(sender: envelope.sender, incarnation: envelope.incarnation, into: &bytes)
        for frame in envelope.frames { append(frame, to: &bytes) }
        return bytes
    }

    /// The reason cut to what a close frame holds, at a character boundary.
    static func truncatedReason(_ reason: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in reason {
            let next = Array(character.utf8)
            guard bytes.count + next.count <= maxCloseReasonBytes else { break }
            bytes += next
        }
        return bytes
    }

    private static func appendInteger<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        var big = value.bigEndian
        withUnsafeBytes(of: &big) { bytes += $0 }
    }

    // MARK: Decoding

    /// Decodes one whole envelope that travelled `direction`.
    public static func decode(_ bytes: ArraySlice<UInt8>, travelling direction: RelayDirection) throws(RelayProtocolError) -> RelayEnvelope {
        var reader = Reader(bytes)
        guard let first = reader.byte(), let second = reader.byte(), [first, second] == magic else { throw .badMagic }
        guard let version = reader.byte() else { throw .truncated }
        guard version == Self.version else { throw .unsupportedVersion(version) }
        guard let nodeLength = reader.byte() else { throw .truncated }
        guard let node = reader.bytes(Int(nodeLength)) else { throw .truncated }
        guard isValidNodeID(node) else { throw .invalidNodeID }
        guard let incarnation = reader.integer(UInt64.self) else { throw .truncated }
        var frames: [RelayFrame] = []
        while !reader.isAtEnd {
            frames.append(try decodeFrame(&reader, travelling: direction))
        }
        guard !frames.isEmpty else { throw .empty }
        return RelayEnvelope(sender: String(decoding: node, as: UTF8.self), incarnation: incarnation, frames: frames)
    }

    public static func decode(_ bytes: [UInt8], travelling direction: RelayDirection) throws(RelayProtocolError) -> RelayEnvelope {
        try decode(bytes[...], travelling: direction)
    }

    private static func decodeFrame(_ reader: inout Reader, travelling direction: RelayDirection) throws(RelayProtocolError) -> RelayFrame {
        guard let rawKind = reader.byte() else { throw .truncated }
        guard let kind = RelayFrameKind(rawValue: rawKind) else { throw .unknownFrameKind(rawKind) }
        guard kind.travels(direction) else { throw .frameInWrongDirection(rawKind) }
        switch kind {
        case .open:
            guard let connection = reader.integer(UInt64.self), let flags = reader.byte(), let length = reader.byte(),
                  let address = reader.bytes(Int(length)) else { throw .truncated }
            guard flags & ~(identifiedFlag | usedTLSFlag) == 0 else { throw .invalidField("open flags") }
            guard length > 0, Int(length) <= maxAddressBytes, let text = String(validating: address, as: UTF8.self) else {
                throw .invalidField("client address")
            }
            return .open(connection: connection, client: RelayedClient(address: text, isIdentified: flags & identifiedFlag != 0,
                                                                       usedTLS: flags & usedTLSFlag != 0))
        case .message:
            guard let connection = reader.integer(UInt64.self), let length = reader.integer(UInt32.self),
                  let text = reader.bytes(Int(length)) else { throw .truncated }
            return .message(connection: connection, text: Array(text))
        case .close:
            guard let connection = reader.integer(UInt64.self) else { throw .truncated }
            return .close(connection: connection)
        case .alive:
            guard let count = reader.integer(UInt32.self) else { throw .truncated }
            guard let connections = reader.connections(Int(count)) else { throw .truncated }
            return .alive(connections: connections)
        case .deliver:
            guard let count = reader.integer(UInt16.self) else { throw .truncated }
            guard count > 0 else { throw .invalidField("deliver to no connection") }
            guard let connections = reader.connections(Int(count)), let length = reader.integer(UInt32.self),
                  let text = reader.bytes(Int(length)) else { throw .truncated }
            return .deliver(connections: connections, text: Array(text))
        case .closeConnection:
            guard let connection = reader.integer(UInt64.self), let code = reader.integer(UInt16.self),
                  let length = reader.byte(), let reason = reader.bytes(Int(length)) else { throw .truncated }
            guard Int(length) <= maxCloseReasonBytes, let text = String(validating: reason, as: UTF8.self) else {
                throw .invalidField("close reason")
            }
            return .closeConnection(connection: connection, code: code, reason: text)
        }
    }

    /// What `--node-id` accepts: 1 to 64 letters, digits, '-' or '_' (so it is one NATS
    /// subject token).
    public static func isValidNodeID(_ bytes: some Collection<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maxNodeIDBytes else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }
}

/// Reads from a slice without ever going past its end: each read returns nil instead.
private struct Reader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var isAtEnd: Bool { position == bytes.endIndex }
    private var remaining: Int { bytes.endIndex - position }

    mutating func byte() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func integer<Value: FixedWidthInteger & UnsignedInteger>(_: Value.Type) -> Value? {
        guard let raw = bytes(MemoryLayout<Value>.size) else { return nil }
        return raw.reduce(Value(0)) { ($0 << 8) | Value($1) }
    }

    /// `count` connection ids, refused before allocating when the bytes cannot hold them.
    mutating func connections(_ count: Int) -> [UInt64]? {
        guard remaining / 8 >= count else { return nil }
        var connections: [UInt64] = []
        connections.reserveCapacity(count)
        for _ in 0..<count {
            guard let connection = integer(UInt64.self) else { return nil }
            connections.append(connection)
        }
        return connections
    }
}
