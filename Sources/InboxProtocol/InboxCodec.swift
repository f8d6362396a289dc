// The wire form of an inbox message: one NATS payload, big-endian, every length checked against
// what remains before anything is copied. One message has exactly one encoding (no optional
// fields, no padding), so what decodes encodes back to the same bytes.
//
//   "BI" | version 1 | space u8 | index u16 | entry count u16 | entry* ;
//   entry = outbox sequence u64 | journal sequence u64 | at i64 (milliseconds since 1970, two's
//           complement) | event count u16 | event* ;
//   event = user u64 | name length u8 | name | data length u32 | data

public enum InboxCodec {
    static let magic: [UInt8] = [0x42, 0x49]   // "BI"
    static let version: UInt8 = 1
    static let headerSize = 2 + 1 + 1 + 2 + 2
    static let entryHeaderSize = 8 + 8 + 8 + 2
    static let smallestEventSize = 8 + 1 + 1 + 4
    public static let maxNameBytes = 64
    /// A message is one publish, and is read back by `STREAM.MSG.GET`, whose reply carries it
    /// in base64 inside JSON: a third larger, and that reply must fit NATS's default largest
    /// payload (1 MiB) too. 256 KiB, as the history stream's batches.
    public static let maxMessageBytes = 256 * 1024
    /// The most entries one message carries, and the most events one entry carries.
    public static let maxEntries = Int(UInt16.max)
    public static let maxEvents = Int(UInt16.max)

    /// Bytes `message` takes on the wire.
    public static func size(of message: InboxMessage) -> Int {
        headerSize + message.entries.reduce(0) { $0 + size(of: $1) }
    }

    /// Bytes `entry` adds to a message.
    public static func size(of entry: InboxEntry) -> Int {
        entryHeaderSize + entry.events.reduce(0) { $0 + size(of: $1) }
    }

    static func size(of event: InboxEvent) -> Int { 8 + 1 + event.name.utf8.count + 4 + event.data.count }

    /// Whether `message` can be encoded (the outbox makes only messages that can).
    public static func fits(_ message: InboxMessage) -> Bool {
        message.entries.count <= maxEntries && size(of: message) <= maxMessageBytes
            && message.entries.allSatisfy { entry in
                entry.events.count <= maxEvents && entry.events.allSatisfy { isValidName($0.name.utf8) }
            }
    }

    public static func encode(_ message: InboxMessage) -> [UInt8] {
        precondition(fits(message), "an inbox message too large or with an invalid event name")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size(of: message))
        bytes += magic
        bytes.append(version)
        bytes.append(message.source.space.rawValue)
        append(message.source.index, to: &bytes)
        append(UInt16(message.entries.count), to: &bytes)
        for entry in message.entries { append(entry, to: &bytes) }
        return bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(InboxProtocolError) -> InboxMessage {
        try decode(bytes[...])
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(InboxProtocolError) -> InboxMessage {
        guard bytes.count <= maxMessageBytes else { throw .tooLarge(bytes.count) }
        var reader = Reader(bytes: bytes)
        guard try reader.bytes(2).elementsEqual(magic) else { throw .badMagic }
        let version = try reader.byte()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let spaceByte = try reader.byte()
        guard let space = InboxSource.Space(rawValue: spaceByte) else { throw .unknownSpace(spaceByte) }
        let index = try reader.integer(UInt16.self)
        let entryCount = Int(try reader.integer(UInt16.self))
        guard entryCount > 0 else { throw .noEntries }
        // Counts the bytes cannot hold are refused before anything is reserved for them.
        guard entryCount <= reader.remaining / (entryHeaderSize + smallestEventSize) else { throw .truncated }
        var entries: [InboxEntry] = []
        entries.reserveCapacity(entryCount)
        for _ in 0..<entryCount {
            let entry = try readEntry(from: &reader)
            if let previous = entries.last, previous.outboxSequence == .max || previous.outboxSequence + 1 != entry.outboxSequence {
                throw .entriesNotConsecutive
            }
            entries.append(entry)
        }
        guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
        return InboxMessage(source: InboxSource(space: space, index: index), entries: entries)
    }

    static func append(_ entry: InboxEntry, to bytes: inout [UInt8]) {
        append(entry.outboxSequence, to: &bytes)
        append(entry.journalSequence, to: &bytes)
        append(UInt64(bitPattern: entry.at), to: &bytes)
        append(UInt16(entry.events.count), to: &bytes)
        for event in entry.events {
            append(event.user, to: &bytes)
            bytes.append(UInt8(event.name.utf8.count))
            bytes += event.name.utf8
            append(UInt32(event.data.count), to: &bytes)
            bytes += event.data
        }
    }

    static func readEntry(from reader: inout Reader) throws(InboxProtocolError) -> InboxEntry {
        let outboxSequence = try reader.integer(UInt64.self)
        guard outboxSequence > 0 else { throw .zeroOutboxSequence }
        let journalSequence = try reader.integer(UInt64.self)
        let at = Int64(bitPattern: try reader.integer(UInt64.self))
        let eventCount = Int(try reader.integer(UInt16.self))
        guard eventCount > 0 else { throw .noEvents }
        guard eventCount <= reader.remaining / smallestEventSize else { throw .truncated }
        var events: [InboxEvent] = []
        events.reserveCapacity(eventCount)
        for _ in 0..<eventCount {
            let user = try reader.integer(UInt64.self)
            let nameBytes = try reader.bytes(Int(try reader.byte()))
            guard isValidName(nameBytes), let name = String(validating: nameBytes, as: UTF8.self) else {
                throw .invalidName
            }
            let data = Array(try reader.bytes(Int(try reader.integer(UInt32.self))))
            events.append(InboxEvent(user: user, name: name, data: data))
        }
        return InboxEntry(outboxSequence: outboxSequence, journalSequence: journalSequence, at: at, events: events)
    }

    static func isValidName(_ name: some Collection<UInt8>) -> Bool {
        (1...maxNameBytes).contains(name.count) && String(validating: name, as: UTF8.self) != nil
    }

    static func append<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        var bigEndian = value.bigEndian
        withUnsafeBytes(of: &bigEndian) { bytes += $0 }
    }
}

/// Reads fields off the front of a slice; every read checks what remains first.
struct Reader {
    private(set) var bytes: ArraySlice<UInt8>

    init(bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    var remaining: Int { bytes.count }

    mutating func byte() throws(InboxProtocolError) -> UInt8 {
        guard let first = bytes.popFirst() else { throw .truncated }
        return first
    }

    mutating func bytes(_ count: Int) throws(InboxProtocolError) -> ArraySlice<UInt8> {
        guard count <= bytes.count else { throw .truncated }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws(InboxProtocolError) -> Integer {
        var value: Integer = 0
        for byte in try bytes(MemoryLayout<Integer>.size) {
            value = value << 8 | Integer(byte)
        }
        return value
    }
}
