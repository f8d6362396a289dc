// The inbox's wire forms held to their exact bytes: the message (InboxCodec) and what a snapshot
// keeps of an outbox and of a reader (InboxStateCodec). Round trips, one encoding per value, the
// outbox grouping entries into messages that fit and splitting a record too large for one, and
// every malformed input refused with an error, never a crash.
import InboxProtocol
import Testing
import TestSupport

@Suite struct InboxCodecTests {
    static let source = InboxSource(space: .boards, index: 3)
    static let at: Int64 = 1_796_099_188_971

    /// Three entries, numbered 7, 8, 9, of one to three events, with times before and after 1970.
    static let message = InboxMessage(source: source, entries: [
        InboxEntry(outboxSequence: 7, journalSequence: 0x0102_0304_0506_0708, at: at, events: [
            InboxEvent(user: 42, name: "order.changed", data: Array(#"{"id":"o-1","status":"accepted"}"#.utf8)),
            InboxEvent(user: 0xFFFF_FFFF_FFFF_FFFF, name: "order.taken", data: []),
        ]),
        InboxEntry(outboxSequence: 8, journalSequence: 0x0102_0304_0506_0709, at: -1, events: [
            InboxEvent(user: 0, name: "订单.变更", data: [0, 0xFF]),
        ]),
        InboxEntry(outboxSequence: 9, journalSequence: 0x0102_0304_0506_0720, at: .max, events: [
            InboxEvent(user: 42, name: "order.changed", data: Array(#"{"id":"o-1","status":"done"}"#.utf8)),
            InboxEvent(user: 43, name: "account.login", data: [1]),
            InboxEvent(user: 42, name: "order.taken", data: []),
        ]),
    ])

    /// A one-event entry numbered `outboxSequence`, as an outbox makes them.
    static func entry(_ outboxSequence: UInt64) -> InboxEntry {
        InboxEntry(outboxSequence: outboxSequence, journalSequence: outboxSequence &+ 100, at: at,
                   events: [InboxEvent(user: outboxSequence, name: "order.changed", data: Array("m\(outboxSequence)".utf8))])
    }

    static let outboxState = InboxOutbox.State(destinations: [
        0: .init(nextSequence: 4, pending: [entry(2), entry(3)]),
        5: .init(nextSequence: 1, pending: []),
        9: .init(nextSequence: 12, pending: []),
        0xFFFF: .init(nextSequence: 10, pending: message.entries),
    ])

    static let readerState = InboxReader.State(position: 0x0102_0304_0506_0708, applied: [
        InboxSource(space: .boards, index: 0): 12,
        InboxSource(space: .boards, index: 3): 1,
        InboxSource(space: .boards, index: 0xFFFF): 0xFFFF_FFFF_FFFF_FFFF,
        InboxSource(space: .accounts, index: 0): 5,
        InboxSource(space: .accounts, index: 2): 7,
    ])

    // MARK: Hand-written inputs, field by field as the layout comments give them

    static func bigEndian<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// A message's header: magic, version, source, entry count.
    static func header(space: UInt8 = 1, index: UInt16 = 3, count: UInt16 = 1) -> [UInt8] {
        [0x42, 0x49, 1, space] + bigEndian(index) + bigEndian(count)
    }

    /// An entry's fields before its events.
    static func entryHeader(outboxSequence: UInt64 = 1, journalSequence: UInt64 = 1, at: Int64 = 0,
                            count: UInt16 = 1) -> [UInt8] {
        bigEndian(outboxSequence) + bigEndian(journalSequence) + bigEndian(at) + bigEndian(count)
    }

    static func event(user: UInt64 = 7, name: [UInt8] = Array("a.b".utf8), data: [UInt8] = []) -> [UInt8] {
        bigEndian(user) + [UInt8(name.count)] + name + bigEndian(UInt32(data.count)) + data
    }

    /// `entry` written field by field, not by the codec.
    static func bytes(of entry: InboxEntry) -> [UInt8] {
        entryHeader(outboxSequence: entry.outboxSequence, journalSequence: entry.journalSequence, at: entry.at,
                    count: UInt16(entry.events.count))
            + entry.events.flatMap { event(user: $0.user, name: Array($0.name.utf8), data: $0.data) }
    }

    /// Entries numbered `outboxSequences` (in the order given, consecutive or not) as one message's bytes.
    static func message(numbered outboxSequences: [UInt64]) -> [UInt8] {
        header(count: UInt16(outboxSequences.count)) + outboxSequences.flatMap { bytes(of: entry($0)) }
    }

    /// An outbox state with its destinations in the order given, each pending entry as raw bytes.
    static func outbox(_ destinations: [(index: UInt16, next: UInt64, pending: [[UInt8]])]) -> [UInt8] {
        var bytes: [UInt8] = [0x42, 0x4F, 1] + bigEndian(UInt16(destinations.count))
        for destination in destinations {
            bytes += bigEndian(destination.index) + bigEndian(destination.next) + bigEndian(UInt32(destination.pending.count))
            for entry in destination.pending { bytes += entry }
        }
        return bytes
    }

    /// A reader state with its sources in the order given.
    static func reader(position: UInt64, _ sources: [(space: UInt8, index: UInt16, applied: UInt64)]) -> [UInt8] {
        var bytes: [UInt8] = [0x42, 0x4E, 1] + bigEndian(position) + bigEndian(UInt32(sources.count))
        for source in sources { bytes += [source.space] + bigEndian(source.index) + bigEndian(source.applied) }
        return bytes
    }

    static func decodeOutbox(_ bytes: [UInt8]) throws(InboxProtocolError) -> InboxOutbox.State {
        try InboxStateCodec.decodeOutbox(bytes[...])
    }

    static func decodeReader(_ bytes: [UInt8]) throws(InboxProtocolError) -> InboxReader.State {
        try InboxStateCodec.decodeReader(bytes[...])
    }

    /// Bytes a message adds to its entries.
    static let messageOverhead = InboxCodec.size(of: InboxMessage(source: source, entries: [entry(1)])) - InboxCodec.size(of: entry(1))

    static func roundTrips(_ message: InboxMessage) throws -> Bool {
        try InboxCodec.decode(InboxCodec.encode(message)) == message
    }

    // MARK: The message: layout and round trips

    @Test func encodesTheDocumentedLayout() throws {
        let message = InboxMessage(source: InboxSource(space: .accounts, index: 0x0102), entries: [
            InboxEntry(outboxSequence: 5, journalSequence: 9, at: -2, events: [InboxEvent(user: 7, name: "a.b", data: [0x7B, 0x7D])]),
            InboxEntry(outboxSequence: 6, journalSequence: 10, at: 1_796_099_188_971, events: [
                InboxEvent(user: 0x0100, name: "c", data: []),
                InboxEvent(user: 9, name: "d.e", data: [0]),
            ]),
        ])
        var expected: [UInt8] = [0x42, 0x49, 1, 2, 0x01, 0x02, 0, 2]   // "BI", version, accounts, index, 2 entries
        expected += [0, 0, 0, 0, 0, 0, 0, 5,   // outbox sequence
                     0, 0, 0, 0, 0, 0, 0, 9,   // journal sequence
                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,   // at -2, two's complement
                     0, 1,   // 1 event
                     0, 0, 0, 0, 0, 0, 0, 7, 3, 0x61, 0x2E, 0x62, 0, 0, 0, 2, 0x7B, 0x7D]
        expected += [0, 0, 0, 0, 0, 0, 0, 6,
                     0, 0, 0, 0, 0, 0, 0, 10,
                     0, 0, 0x01, 0xA2, 0x2F, 0xDA, 0xA8, 0xEB,   // 1_796_099_188_971
                     0, 2,
                     0, 0, 0, 0, 0, 0, 1, 0, 1, 0x63, 0, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0, 9, 3, 0x64, 0x2E, 0x65, 0, 0, 0, 1, 0]
        #expect(InboxCodec.encode(message) == expected)
        #expect(InboxCodec.size(of: message) == expected.count)
        #expect(message.entries.map(InboxCodec.size(of:)) == [26 + 18, 26 + 14 + 17])
        #expect(try InboxCodec.decode(expected) == message)
    }

    @Test func entriesAndEventsRoundTripInTheirOrder() throws {
        let bytes = InboxCodec.encode(Self.message)
        #expect(bytes == Self.header(count: 3) + Self.message.entries.flatMap(Self.bytes(of:)))
        #expect(bytes.count == InboxCodec.size(of: Self.message))
        #expect(bytes.count == Self.messageOverhead + Self.message.entries.map(InboxCodec.size(of:)).reduce(0, +))
        let decoded = try InboxCodec.decode(bytes)
        #expect(decoded == Self.message)
        #expect(InboxCodec.encode(decoded) == bytes)
    }

    @Test(arguments: [
        InboxEvent(user: 1, name: "account.login", data: []),
        InboxEvent(user: 2, name: String(repeating: "n", count: InboxCodec.maxNameBytes), data: [1]),
        InboxEvent(user: 3, name: String(repeating: "é", count: 32), data: []),
        InboxEvent(user: 4, name: String(repeating: "重", count: 21) + "x", data: [2]),
        InboxEvent(user: 5, name: String(repeating: "🚚", count: 16), data: []),
        InboxEvent(user: 6, name: "\u{0}", data: Array(repeating: 0xAB, count: 70_000)),
    ])
    func boundaryEventsRoundTrip(event: InboxEvent) throws {
        let alone = InboxMessage(source: Self.source,
                                 entries: [InboxEntry(outboxSequence: 1, journalSequence: 0, at: Self.at, events: [event])])
        let second = InboxMessage(source: Self.source, entries: [
            Self.entry(1), InboxEntry(outboxSequence: 2, journalSequence: 0, at: Self.at, events: [Self.entry(1).events[0], event]),
        ])
        for message in [alone, second] {
            #expect(InboxCodec.fits(message))
            #expect(try Self.roundTrips(message))
        }
    }

    @Test func bothSpacesAndExtremeNumbersRoundTrip() throws {
        let runs: [[UInt64]] = [[1], [1, 2, 3], [.max], [.max - 2, .max - 1, .max]]
        for space in [InboxSource.Space.boards, .accounts] {
            for index in [0, 1, UInt16.max] {
                for (run, (journalSequence, at)) in zip(runs, [(0, .min), (.max, .max), (.max, -1), (0, 0)] as [(UInt64, Int64)]) {
                    let message = InboxMessage(source: InboxSource(space: space, index: index), entries: run.map {
                        InboxEntry(outboxSequence: $0, journalSequence: journalSequence, at: at, events: Self.message.entries[0].events)
                    })
                    #expect(try Self.roundTrips(message), "\(space) \(index) \(run)")
                }
            }
        }
    }

    @Test func keepsTheNamesBytesNotJustAnEquivalentString() throws {
        let decomposed = "cafe\u{301}"   // equal to "café" as a String, one byte longer in UTF-8
        let message = InboxMessage(source: Self.source, entries: [
            InboxEntry(outboxSequence: 1, journalSequence: 1, at: Self.at, events: [InboxEvent(user: 1, name: decomposed, data: [])])])
        let decoded = try InboxCodec.decode(InboxCodec.encode(message))
        #expect(Array(decoded.entries[0].events[0].name.utf8) == Array(decomposed.utf8))
    }

    @Test func aMessageOfExactlyTheLimitRoundTripsAndOneByteMoreDoesNotFit() throws {
        func message(dataBytes: Int) -> InboxMessage {
            InboxMessage(source: Self.source, entries: [
                Self.entry(1),
                InboxEntry(outboxSequence: 2, journalSequence: 2, at: Self.at,
                           events: [InboxEvent(user: 1, name: "x", data: Array(repeating: 0x5A, count: dataBytes))]),
            ])
        }
        let room = InboxCodec.maxMessageBytes - InboxCodec.size(of: message(dataBytes: 0))
        let largest = message(dataBytes: room)
        let bytes = InboxCodec.encode(largest)
        #expect(bytes.count == InboxCodec.maxMessageBytes)
        #expect(try InboxCodec.decode(bytes) == largest)
        #expect(!InboxCodec.fits(message(dataBytes: room + 1)))
    }

    @Test func namesThatCannotBeEncodedDoNotFitInAnyEntry() {
        for name in ["", String(repeating: "n", count: InboxCodec.maxNameBytes + 1), String(repeating: "é", count: 32) + "a"] {
            let entry = InboxEntry(outboxSequence: 2, journalSequence: 1, at: Self.at, events: [InboxEvent(user: 1, name: name, data: [])])
            let first = InboxMessage(source: Self.source, entries: [entry, Self.entry(3)])
            let second = InboxMessage(source: Self.source, entries: [Self.entry(1), entry])
            #expect(!InboxCodec.fits(first), "\(name.utf8.count)-byte name in the first entry")
            #expect(!InboxCodec.fits(second), "\(name.utf8.count)-byte name in the second entry")
        }
    }

    /// The smallest event takes 14 bytes, so the byte limit ends an entry at 18,722 events, long
    /// before its count (65,535) would overflow: the count never decides.
    @Test func anEntryReachesTheByteLimitLongBeforeItsEventCount() {
        let event = InboxEvent(user: 1, name: "e", data: [])
        func entry(_ count: Int) -> InboxMessage {
            InboxMessage(source: Self.source, entries: [
                InboxEntry(outboxSequence: 1, journalSequence: 1, at: 0, events: Array(repeating: event, count: count))])
        }
        let eventSize = InboxCodec.size(of: entry(2)) - InboxCodec.size(of: entry(1))
        let most = (InboxCodec.maxMessageBytes - (InboxCodec.size(of: entry(1)) - eventSize)) / eventSize
        #expect(eventSize == 14 && most == 18_722)
        #expect(most < InboxCodec.maxEvents)
        #expect(InboxCodec.fits(entry(most)))
        #expect(!InboxCodec.fits(entry(most + 1)))
    }

    @Test func decodesFromASliceThatDoesNotStartAtZero() throws {
        let bytes = [0xEE, 0xEE] + InboxCodec.encode(Self.message)
        #expect(try InboxCodec.decode(bytes[2...]) == Self.message)
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(bytes[2..<(bytes.count - 1)]) }
        #expect(throws: InboxProtocolError.badMagic) { try InboxCodec.decode(bytes[1...]) }
    }

    // MARK: The message: refusals

    @Test func everyTruncationIsRefusedNeverACrash() {
        Self.expectEveryTruncationRefused(InboxCodec.encode(Self.message)) { try InboxCodec.decode($0) }
    }

    @Test func refusesABadHeader() {
        var bytes = InboxCodec.encode(Self.message)
        bytes[0] = 0x43
        #expect(throws: InboxProtocolError.badMagic) { try InboxCodec.decode(bytes) }
        bytes = InboxCodec.encode(Self.message)
        bytes[1] = 0x4F   // an outbox state's magic
        #expect(throws: InboxProtocolError.badMagic) { try InboxCodec.decode(bytes) }
        for version: UInt8 in [0, 2, 0xFF] {
            bytes = InboxCodec.encode(Self.message)
            bytes[2] = version
            #expect(throws: InboxProtocolError.unsupportedVersion(version)) { try InboxCodec.decode(bytes) }
        }
        for space: UInt8 in [0, 3, 0xFF] {
            #expect(throws: InboxProtocolError.unknownSpace(space)) {
                try InboxCodec.decode(Self.header(space: space) + Self.bytes(of: Self.entry(1)))
            }
        }
    }

    @Test func refusesAMessageWithoutEntries() {
        #expect(throws: InboxProtocolError.noEntries) { try InboxCodec.decode(Self.header(count: 0)) }
        #expect(throws: InboxProtocolError.noEntries, "a count of 0 is not read as a miscount") {
            try InboxCodec.decode(Self.header(count: 0) + Self.bytes(of: Self.entry(1)))
        }
    }

    @Test func refusesOutboxSequenceZeroInAnyEntry() {
        #expect(throws: InboxProtocolError.zeroOutboxSequence) {
            try InboxCodec.decode(Self.header() + Self.entryHeader(outboxSequence: 0) + Self.event())
        }
        #expect(throws: InboxProtocolError.zeroOutboxSequence, "after an entry numbered UInt64.max") {
            try InboxCodec.decode(Self.header(count: 2) + Self.bytes(of: Self.entry(.max)) + Self.entryHeader(outboxSequence: 0)
                                  + Self.event())
        }
    }

    @Test func refusesAnEntryWithoutEvents() {
        #expect(throws: InboxProtocolError.noEvents) {
            try InboxCodec.decode(Self.header() + Self.entryHeader(count: 0) + Self.event())
        }
        #expect(throws: InboxProtocolError.noEvents, "in the second entry") {
            try InboxCodec.decode(Self.header(count: 2) + Self.bytes(of: Self.entry(1)) + Self.entryHeader(outboxSequence: 2, count: 0)
                                  + Self.event())
        }
    }

    @Test(arguments: [
        [1, 3],   // a gap
        [4, 5, 7],
        [2, 2],   // a repeat
        [3, 2],   // decreasing
        [5, 4, 3],
        [.max, 1],   // after UInt64.max, numbering does not wrap
        [.max - 1, .max, 1],
        [.max, .max],
    ] as [[UInt64]])
    func refusesEntriesNotNumberedConsecutively(numbers: [UInt64]) {
        #expect(throws: InboxProtocolError.entriesNotConsecutive) { try InboxCodec.decode(Self.message(numbered: numbers)) }
    }

    @Test(arguments: [
        [],
        Array(repeating: 0x6E, count: InboxCodec.maxNameBytes + 1),
        Array(repeating: 0xFF, count: 255),
        [0xFF],
        [0x61, 0xC3],   // a sequence cut short
        [0xC0, 0xAF],   // an overlong "/"
        [0xED, 0xA0, 0x80],   // a surrogate
        [0xF4, 0x90, 0x80, 0x80],   // past U+10FFFF
    ] as [[UInt8]])
    func refusesNamesEmptyTooLongOrNotUTF8(name: [UInt8]) {
        // A byte of data, so that an empty name leaves the bytes the smallest valid event needs:
        // fewer are refused as truncated before any name is read.
        let bad = Self.event(name: name, data: [0])
        #expect(throws: InboxProtocolError.invalidName) {
            try InboxCodec.decode(Self.header() + Self.entryHeader() + bad)
        }
        #expect(throws: InboxProtocolError.invalidName, "in the second event") {
            try InboxCodec.decode(Self.header() + Self.entryHeader(count: 2) + Self.event() + bad)
        }
        #expect(throws: InboxProtocolError.invalidName, "in the second entry") {
            try InboxCodec.decode(Self.header(count: 2) + Self.bytes(of: Self.entry(1)) + Self.entryHeader(outboxSequence: 2) + bad)
        }
    }

    @Test func refusesTrailingBytes() {
        let bytes = InboxCodec.encode(Self.message)
        #expect(throws: InboxProtocolError.trailingBytes(1)) { try InboxCodec.decode(bytes + [0]) }
        #expect(throws: InboxProtocolError.trailingBytes(3)) { try InboxCodec.decode(bytes + [0x42, 0x49, 1]) }
        #expect(throws: InboxProtocolError.trailingBytes(Self.event().count), "an event more than its entry counts") {
            try InboxCodec.decode(Self.header() + Self.entryHeader(count: 1) + Self.event() + Self.event())
        }
        let second = Self.bytes(of: Self.entry(2))
        #expect(throws: InboxProtocolError.trailingBytes(second.count), "an entry more than the message counts") {
            try InboxCodec.decode(Self.header(count: 1) + Self.bytes(of: Self.entry(1)) + second)
        }
    }

    @Test func refusesAnEntryCountTheBytesCannotHold() {
        let one = Self.bytes(of: Self.entry(1))
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header(count: 0xFFFF) + one) }
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header(count: 2) + one) }
        #expect(throws: InboxProtocolError.truncated) {
            try InboxCodec.decode(Self.header(count: 3) + one + Self.bytes(of: Self.entry(2)))
        }
        let long = Self.entryHeader() + Self.event(data: Array(repeating: 0x41, count: 200))
        #expect(throws: InboxProtocolError.truncated, "a count the bytes seem to hold, one entry short") {
            try InboxCodec.decode(Self.header(count: 2) + long)
        }
    }

    @Test func refusesEventCountsAndLengthsLargerThanTheInput() {
        #expect(throws: InboxProtocolError.truncated) {
            try InboxCodec.decode(Self.header() + Self.entryHeader(count: 0xFFFF) + Self.event())
        }
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header() + Self.entryHeader(count: 2) + Self.event()) }
        let hugeData = Self.bigEndian(UInt64(7)) + [1, 0x61] + Self.bigEndian(UInt32.max) + [0x41]
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header() + Self.entryHeader() + hugeData) }
        let longerName = Self.bigEndian(UInt64(7)) + [200] + Array("a.b".utf8) + Self.bigEndian(UInt32(0))
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header() + Self.entryHeader() + longerName) }
    }

    @Test func refusesAnOversizePayloadBeforeReadingIt() {
        let size = InboxCodec.maxMessageBytes + 1
        #expect(throws: InboxProtocolError.tooLarge(size)) { try InboxCodec.decode([UInt8](repeating: 0, count: size)) }
        let valid = InboxCodec.encode(Self.message)
        let padded = valid + [UInt8](repeating: 0, count: InboxCodec.maxMessageBytes + 1 - valid.count)
        #expect(throws: InboxProtocolError.tooLarge(size)) { try InboxCodec.decode(padded) }
    }

    @Test func randomlyDamagedMessagesAreRefusedOrEncodeBackToTheirBytes() throws {
        var generator = SeededGenerator(seed: 0x1B0C)
        let valid = InboxCodec.encode(Self.message)
        var decodedCount = 0
        for bytes in Self.damagedCopies(of: valid, using: &generator) {
            guard let message = try? InboxCodec.decode(bytes) else { continue }
            decodedCount += 1
            #expect(InboxCodec.encode(message) == bytes)
            #expect(try InboxCodec.decode(([0xEE] + bytes)[1...]) == message)
        }
        #expect(decodedCount > 0, "some damage (a user, a journal sequence, a time, data) leaves a valid message")
    }

    // MARK: The outbox's messages: as few as fit, and records split when too large for one

    @Test func aBurstOfSmallRecordsIsOneMessagePerPartition() throws {
        var outbox = InboxOutbox(source: Self.source)
        for record: UInt64 in 1...100 {
            outbox.add(journalSequence: 1_000 + record, at: Self.at + Int64(record), eventsByDestination: [
                (7, [InboxEvent(user: record, name: "order.changed", data: Array("r\(record)".utf8))]),
                (2, record % 10 == 0 ? [InboxEvent(user: 1, name: "account.login", data: [])] : []),
            ])
        }
        #expect(outbox.pendingCount == 110)
        let toSeven = outbox.publishes(excluding: [2])
        #expect(toSeven.map(\.destination) == [7])
        #expect(toSeven[0].message.entries.map(\.outboxSequence) == Array(1...100))
        #expect(toSeven[0].message.entries.map(\.journalSequence) == Array(1_001...1_100))
        #expect(toSeven[0].message.entries.map(\.at) == (1...100).map { Self.at + $0 })
        #expect(outbox.publishes(excluding: [2]).isEmpty, "entries sent are not sent again unasked")
        let toTwo = outbox.publishes()
        #expect(toTwo.map(\.destination) == [2])
        #expect(toTwo[0].message.entries.map(\.outboxSequence) == Array(1...10))
        #expect(toTwo[0].message.entries.map(\.journalSequence) == (1...10).map { 1_000 + 10 * $0 })
        for publish in toSeven + toTwo {
            #expect(publish.message.source == Self.source)
            #expect(InboxCodec.fits(publish.message))
            #expect(try Self.roundTrips(publish.message))
        }
    }

    @Test func entriesFillingExactlyOneMessageShareItAndOneByteMoreSplitsThem() throws {
        let empty = InboxEntry(outboxSequence: 1, journalSequence: 1, at: Self.at, events: [InboxEvent(user: 1, name: "x", data: [])])
        // The data bytes three such entries share in one message.
        let room = InboxCodec.maxMessageBytes - Self.messageOverhead - 3 * InboxCodec.size(of: empty)
        func publishes(lastData extra: Int) -> [InboxOutbox.Publish] {
            var outbox = InboxOutbox(source: Self.source)
            for (record, dataBytes) in zip(UInt64(1)..., [room / 3, room / 3, room - 2 * (room / 3) + extra]) {
                outbox.add(journalSequence: record, at: Self.at, eventsByDestination: [
                    (0, [InboxEvent(user: 1, name: "x", data: Array(repeating: UInt8(record), count: dataBytes))])])
            }
            return outbox.publishes()
        }
        let whole = publishes(lastData: 0)
        #expect(whole.map { $0.message.entries.map(\.outboxSequence) } == [[1, 2, 3]])
        #expect(whole.map { InboxCodec.encode($0.message).count } == [InboxCodec.maxMessageBytes])
        let split = publishes(lastData: 1)
        #expect(split.map { $0.message.entries.map(\.outboxSequence) } == [[1, 2], [3]])
        for publish in whole + split {
            #expect(InboxCodec.fits(publish.message))
            #expect(try Self.roundTrips(publish.message))
        }
    }

    /// The smallest entry takes 40 bytes, so the byte limit ends a message after 6,553 entries,
    /// long before `maxEntries` (65_535) would: the entry count never decides a split.
    @Test func manySmallestEntriesSplitAtTheByteLimitBeforeTheEntryCount() throws {
        let smallest = InboxEntry(outboxSequence: 1, journalSequence: 1, at: 0, events: [InboxEvent(user: 1, name: "x", data: [])])
        let perMessage = (InboxCodec.maxMessageBytes - Self.messageOverhead) / InboxCodec.size(of: smallest)
        #expect(perMessage == 6_553)
        #expect(perMessage < InboxCodec.maxEntries)
        let count = 2 * perMessage + 5
        // Restored rather than added one by one: the same unsent entries, built in linear time.
        let pending = (1...UInt64(count)).map { InboxEntry(outboxSequence: $0, journalSequence: $0, at: 0, events: smallest.events) }
        var outbox = InboxOutbox(source: Self.source,
                                 state: .init(destinations: [0: .init(nextSequence: UInt64(count) + 1, pending: pending)]))
        let publishes = outbox.publishes()
        #expect(publishes.map(\.message.entries.count) == [perMessage, perMessage, 5])
        #expect(publishes.map(\.message.entries[0].outboxSequence) == [1, UInt64(perMessage) + 1, 2 * UInt64(perMessage) + 1])
        #expect(publishes.flatMap(\.message.entries) == pending)
        for publish in publishes.dropLast() {
            #expect(InboxCodec.size(of: publish.message) + InboxCodec.size(of: smallest) > InboxCodec.maxMessageBytes, "full")
        }
        for publish in publishes {
            #expect(InboxCodec.fits(publish.message))
            #expect(try Self.roundTrips(publish.message))
        }
    }

    @Test func aRecordTooLargeForOneMessageBecomesConsecutiveEntriesInSeparateMessages() throws {
        let events = (0..<7).map { InboxEvent(user: $0, name: "order.changed", data: Array(repeating: UInt8($0), count: 75_000)) }
        var outbox = InboxOutbox(source: Self.source)
        outbox.add(journalSequence: 1, at: Self.at, eventsByDestination: [(4, [InboxEvent(user: 9, name: "a", data: [])])])
        outbox.add(journalSequence: 2, at: Self.at + 1, eventsByDestination: [(4, events), (6, Array(events.prefix(1)))])
        let publishes = outbox.publishes()
        let toFour = publishes.filter { $0.destination == 4 }
        // Three events of 75,000 bytes fill an entry; the small record before shares the first message.
        #expect(toFour.map { $0.message.entries.map(\.outboxSequence) } == [[1, 2], [3], [4]])
        let split = toFour.flatMap(\.message.entries).dropFirst()
        #expect(split.map(\.events.count) == [3, 3, 1])
        #expect(split.flatMap(\.events) == events)
        #expect(split.allSatisfy { $0.journalSequence == 2 && $0.at == Self.at + 1 })
        #expect(publishes.filter { $0.destination == 6 }.map { $0.message.entries.map(\.outboxSequence) } == [[1]])
        for publish in publishes {
            #expect(InboxCodec.fits(publish.message))
            #expect(try Self.roundTrips(publish.message))
        }
    }

    @Test func eventsFillingExactlyOneMessageStayOneEntryAndOneByteMoreSplitsThem() {
        let one = InboxEntry(outboxSequence: 1, journalSequence: 1, at: Self.at, events: [InboxEvent(user: 1, name: "x", data: [])])
        let two = InboxEntry(outboxSequence: 1, journalSequence: 1, at: Self.at, events: one.events + one.events)
        let eventOverhead = InboxCodec.size(of: two) - InboxCodec.size(of: one)   // user, name length, "x", data length
        let room = InboxCodec.maxMessageBytes - Self.messageOverhead - InboxCodec.size(of: one) - eventOverhead   // data of two events
        let half = room / 2
        let filling = [InboxEvent(user: 1, name: "x", data: Array(repeating: 1, count: half)),
                       InboxEvent(user: 2, name: "x", data: Array(repeating: 2, count: room - half))]
        var outbox = InboxOutbox(source: Self.source)
        outbox.add(journalSequence: 1, at: Self.at, eventsByDestination: [(0, filling)])
        let whole = outbox.publishes()
        #expect(whole.map { $0.message.entries.map(\.events) } == [[filling]])
        #expect(whole.map { InboxCodec.encode($0.message).count } == [InboxCodec.maxMessageBytes])
        let overflowing = [filling[0], InboxEvent(user: 2, name: "xy", data: filling[1].data)]
        outbox.add(journalSequence: 2, at: Self.at, eventsByDestination: [(0, overflowing)])
        let split = outbox.publishes()
        #expect(split.map { $0.message.entries.map(\.outboxSequence) } == [[2], [3]])
        #expect(split.map { $0.message.entries.map(\.events) } == [[[overflowing[0]]], [[overflowing[1]]]])
        #expect((whole + split).allSatisfy { InboxCodec.fits($0.message) })
    }

    /// More events than an entry's count can hold are more bytes than a message holds: the
    /// record is split at the byte limit, one entry per message (18,722 of the smallest events).
    @Test func aRecordWithMoreEventsThanOneEntryCountsIsSplitAtTheByteLimit() throws {
        let events = (0..<(InboxCodec.maxEvents + 10)).map { InboxEvent(user: UInt64($0), name: "e", data: []) }
        var outbox = InboxOutbox(source: Self.source)
        outbox.add(journalSequence: 1, at: Self.at, eventsByDestination: [(0, events)])
        let publishes = outbox.publishes()
        #expect(publishes.map { $0.message.entries.map(\.events.count) } == [[18_722], [18_722], [18_722], [9_379]])
        #expect(publishes.map { $0.message.entries.map(\.outboxSequence) } == [[1], [2], [3], [4]])
        #expect(publishes.flatMap(\.message.entries).flatMap(\.events) == events)
        #expect(publishes.allSatisfy { InboxCodec.fits($0.message) })
        #expect(try publishes.allSatisfy { try Self.roundTrips($0.message) })
    }

    // MARK: Outbox state

    @Test func encodesTheDocumentedOutboxLayoutWithPendingEntriesInline() {
        let state = InboxOutbox.State(destinations: [
            7: .init(nextSequence: 1, pending: []),
            2: .init(nextSequence: 5, pending: [
                InboxEntry(outboxSequence: 3, journalSequence: 8, at: -1, events: [InboxEvent(user: 1, name: "x", data: [0xAA])]),
                InboxEntry(outboxSequence: 4, journalSequence: 9, at: 1_000, events: [InboxEvent(user: 2, name: "y", data: [])]),
            ]),
        ])
        var expected: [UInt8] = [0x42, 0x4F, 1, 0, 2]   // "BO", version, 2 partitions
        expected += [0, 2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2]   // partition 2, next 5, 2 pending
        expected += [0, 0, 0, 0, 0, 0, 0, 3,
                     0, 0, 0, 0, 0, 0, 0, 8,
                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                     0, 1,
                     0, 0, 0, 0, 0, 0, 0, 1, 1, 0x78, 0, 0, 0, 1, 0xAA]
        expected += [0, 0, 0, 0, 0, 0, 0, 4,   // no length before an entry: it follows the one before
                     0, 0, 0, 0, 0, 0, 0, 9,
                     0, 0, 0, 0, 0, 0, 0x03, 0xE8,
                     0, 1,
                     0, 0, 0, 0, 0, 0, 0, 2, 1, 0x79, 0, 0, 0, 0]
        expected += [0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]   // partition 7, next 1, nothing pending
        #expect(InboxStateCodec.encode(state) == expected)
        #expect(InboxStateCodec.encode(InboxOutbox.State()) == [0x42, 0x4F, 1, 0, 0])
    }

    @Test func outboxStateRoundTrips() throws {
        for state in [Self.outboxState, InboxOutbox.State()] {
            let bytes = InboxStateCodec.encode(state)
            let decoded = try Self.decodeOutbox(bytes)
            #expect(decoded == state)
            #expect(InboxStateCodec.encode(decoded) == bytes)
            #expect(try InboxStateCodec.decodeOutbox(([0xEE] + bytes)[1...]) == state)
        }
    }

    @Test func aLiveOutboxsStateRoundTripsAndRestoresTheSamePublishes() throws {
        var outbox = InboxOutbox(source: Self.source)
        func add(_ records: ClosedRange<UInt64>) {
            for record in records {
                outbox.add(journalSequence: record, at: Self.at + Int64(record), eventsByDestination: [
                    (0, [InboxEvent(user: record, name: "order.changed", data: [])]),
                    (UInt16(record % 2 + 1), [InboxEvent(user: 1, name: "x", data: [])]),
                ])
            }
        }
        add(1...3)
        let delivered = outbox.publishes()
        add(4...6)
        let inFlight = outbox.publishes()
        delivered.forEach { outbox.acknowledged($0) }
        #expect(outbox.pendingCount == 6)
        let decoded = try Self.decodeOutbox(InboxStateCodec.encode(outbox.state))
        #expect(decoded == outbox.state)
        #expect(decoded.destinations.mapValues { $0.pending.map(\.journalSequence) } == [0: [4, 5, 6], 1: [4, 6], 2: [5]])
        var restored = InboxOutbox(source: Self.source, state: decoded)
        #expect(restored.state == outbox.state)
        #expect(restored.pendingCount == outbox.pendingCount)
        // What the restored outbox sends first is what the live one sends again after a failure.
        for publish in inFlight {
            let isToSendAgain = outbox.failed(publish)
            #expect(isToSendAgain)
        }
        let again = outbox.publishes()
        let first = restored.publishes()
        #expect(first.map(\.destination) == again.map(\.destination))
        #expect(first.map(\.message) == again.map(\.message))
        #expect(first.map { $0.message.entries.map(\.outboxSequence) } == [[4, 5, 6], [2, 3], [3]])
        #expect(restored.publishes().isEmpty)
    }

    @Test func aRestoredOutboxSendsItsPendingEntriesFirstWithTheNewOnes() {
        var outbox = InboxOutbox(source: Self.source, state: .init(destinations: [
            0: .init(nextSequence: 4, pending: [Self.entry(2), Self.entry(3)]),
            1: .init(nextSequence: 9, pending: []),
        ]))
        #expect(outbox.pendingCount == 2)
        let event = InboxEvent(user: 5, name: "order.changed", data: [])
        outbox.add(journalSequence: 200, at: Self.at, eventsByDestination: [(0, [event]), (1, [event])])
        let publishes = outbox.publishes()
        #expect(publishes.map(\.destination) == [0, 1])
        #expect(publishes.map { $0.message.entries.map(\.outboxSequence) } == [[2, 3, 4], [9]])
        #expect(Array(publishes[0].message.entries.prefix(2)) == [Self.entry(2), Self.entry(3)])
        #expect(outbox.publishes().isEmpty)
    }

    @Test func outboxEncodingIsTheSameWhateverTheDictionaryOrder() {
        var generator = SeededGenerator(seed: 0x0B0C)
        let spread = (0..<40).map { (index: Int) -> (UInt16, InboxOutbox.State.Destination) in
            let number = UInt64(index + 1)
            return (UInt16(index * 1_000 + 1), InboxOutbox.State.Destination(nextSequence: number + 1, pending: [Self.entry(number)]))
        }
        let entries = spread + Self.outboxState.destinations.map { ($0.key, $0.value) }
        let expected = InboxStateCodec.encode(InboxOutbox.State(destinations: Dictionary(uniqueKeysWithValues: entries)))
        var orders: Set<[UInt16]> = []
        for capacity in [0, 64, 500, 4_000] {
            var destinations = [UInt16: InboxOutbox.State.Destination](minimumCapacity: capacity)
            for (index, destination) in entries.shuffled(using: &generator) { destinations[index] = destination }
            orders.insert(Array(destinations.keys))
            #expect(InboxStateCodec.encode(InboxOutbox.State(destinations: destinations)) == expected)
        }
        #expect(orders.count > 1, "the dictionaries iterated in different orders")
    }

    @Test func refusesPendingNumberingWithHolesOrOutOfOrder() {
        for numbers in [[2, 4], [3, 2], [2, 2], [1, 3, 4], [5, 4, 3]] as [[UInt64]] {
            let destination = InboxOutbox.State.Destination(nextSequence: numbers.last! + 1, pending: numbers.map(Self.entry))
            let state = InboxOutbox.State(destinations: [0: destination])
            #expect(throws: InboxProtocolError.inconsistentState, "pending \(numbers)") {
                try Self.decodeOutbox(InboxStateCodec.encode(state))
            }
        }
    }

    @Test func refusesANextNumberThatDoesNotFollowTheLastPending() {
        for next: UInt64 in [0, 1, 3, 5] {
            let state = InboxOutbox.State(destinations: [0: .init(nextSequence: next, pending: [Self.entry(2), Self.entry(3)])])
            #expect(throws: InboxProtocolError.inconsistentState, "next \(next)") {
                try Self.decodeOutbox(InboxStateCodec.encode(state))
            }
        }
        let nothingPendingNextZero = InboxOutbox.State(destinations: [0: .init(nextSequence: 0, pending: [])])
        #expect(throws: InboxProtocolError.inconsistentState) { try Self.decodeOutbox(InboxStateCodec.encode(nothingPendingNextZero)) }
    }

    @Test func refusesNumberingThatReachesTheLastSequence() throws {
        let last = Self.bytes(of: Self.entry(.max))
        #expect(throws: InboxProtocolError.inconsistentState, "the last pending entry at the maximum") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 1, pending: [last])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState, "an earlier pending entry at the maximum") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 4, pending: [last, Self.bytes(of: Self.entry(3))])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState, "no room to number one more") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: .max, pending: [Self.bytes(of: Self.entry(.max - 1))])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState, "no room to number one more, nothing pending") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: .max, pending: [])]))
        }
        #expect(try Self.decodeOutbox(Self.outbox([(index: 0, next: .max - 1, pending: [Self.bytes(of: Self.entry(.max - 2))])]))
                .destinations[0]?.nextSequence == .max - 1, "the highest next number that leaves room for one more")
    }

    @Test func refusesDestinationsOutOfOrderOrTwice() throws {
        #expect(throws: InboxProtocolError.inconsistentState) {
            try Self.decodeOutbox(Self.outbox([(index: 5, next: 1, pending: []), (index: 2, next: 1, pending: [])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState) {
            try Self.decodeOutbox(Self.outbox([(index: 2, next: 1, pending: []), (index: 2, next: 1, pending: [])]))
        }
        #expect(try Self.decodeOutbox(Self.outbox([(index: 2, next: 1, pending: []), (index: 5, next: 1, pending: [])]))
                .destinations.keys.sorted() == [2, 5])
    }

    @Test func refusesADamagedPendingEntryWithItsOwnError() {
        #expect(throws: InboxProtocolError.zeroOutboxSequence) {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 1, pending: [Self.entryHeader(outboxSequence: 0) + Self.event()])]))
        }
        #expect(throws: InboxProtocolError.noEvents) {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 2, pending: [Self.entryHeader(count: 0) + Self.event()])]))
        }
        #expect(throws: InboxProtocolError.invalidName) {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 2, pending: [Self.entryHeader() + Self.event(name: [0xFF])])]))
        }
        let second = Self.bytes(of: Self.entry(2))
        #expect(throws: InboxProtocolError.trailingBytes(second.count), "an entry more than the partition counts") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 2, pending: [Self.bytes(of: Self.entry(1))])]) + second)
        }
    }

    @Test func refusesABadOutboxHeaderCountsAndTrailingBytes() {
        let bytes = InboxStateCodec.encode(Self.outboxState)
        #expect(throws: InboxProtocolError.badMagic) { try Self.decodeOutbox(InboxStateCodec.encode(Self.readerState)) }
        #expect(throws: InboxProtocolError.badMagic) { try Self.decodeOutbox(InboxCodec.encode(Self.message)) }
        var newer = bytes
        newer[2] = 2
        #expect(throws: InboxProtocolError.unsupportedVersion(2)) { try Self.decodeOutbox(newer) }
        #expect(throws: InboxProtocolError.trailingBytes(1)) { try Self.decodeOutbox(bytes + [0]) }
        let hugePending = [0x42, 0x4F, 1, 0, 1, 0, 0] + Self.bigEndian(UInt64(1)) + Self.bigEndian(UInt32.max)
            + Self.bytes(of: Self.entry(1))
        #expect(throws: InboxProtocolError.truncated) { try Self.decodeOutbox(hugePending) }
        var onePendingShort = Self.outbox([(index: 0, next: 3, pending: [Self.bytes(of: Self.entry(1)), Self.bytes(of: Self.entry(2))])])
        onePendingShort[5 + 2 + 8 + 3] = 3   // pending count 3
        #expect(throws: InboxProtocolError.truncated) { try Self.decodeOutbox(onePendingShort) }
        #expect(throws: InboxProtocolError.truncated, "more partitions than the bytes hold") {
            try Self.decodeOutbox([0x42, 0x4F, 1, 0xFF, 0xFF] + Self.bigEndian(UInt16(0)) + Self.bigEndian(UInt64(1))
                                  + Self.bigEndian(UInt32(0)))
        }
    }

    @Test func everyOutboxStateTruncationIsRefused() {
        for state in [Self.outboxState, InboxOutbox.State()] {
            Self.expectEveryTruncationRefused(InboxStateCodec.encode(state)) { try InboxStateCodec.decodeOutbox($0) }
        }
    }

    @Test func randomlyDamagedOutboxStatesAreRefusedOrEncodeBackToTheirBytes() {
        let decoded = Self.damagedCopiesDecodingBack(InboxStateCodec.encode(Self.outboxState), seed: 0x0B0B,
                                                      decode: { try Self.decodeOutbox($0) }, encode: InboxStateCodec.encode)
        #expect(decoded > 0, "some damage (a journal sequence, a time, a user, data) leaves a valid state")
    }

    // MARK: Reader state

    @Test func encodesTheDocumentedReaderLayoutSortedBySpaceThenIndex() {
        let state = InboxReader.State(position: 9, applied: [InboxSource(space: .accounts, index: 1): 4,
                                                            InboxSource(space: .boards, index: 2): 6])
        let expected: [UInt8] = [0x42, 0x4E, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2,
                                 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 6,
                                 2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4]
        #expect(InboxStateCodec.encode(state) == expected)
        #expect(InboxStateCodec.encode(InboxReader.State()) == [0x42, 0x4E, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func readerStateRoundTrips() throws {
        for state in [Self.readerState, InboxReader.State()] {
            let bytes = InboxStateCodec.encode(state)
            let decoded = try Self.decodeReader(bytes)
            #expect(decoded == state)
            #expect(InboxStateCodec.encode(decoded) == bytes)
            #expect(try InboxStateCodec.decodeReader(([0xEE] + bytes)[1...]) == state)
        }
    }

    @Test func readerEncodingIsTheSameWhateverTheDictionaryOrder() {
        var generator = SeededGenerator(seed: 0x0B0D)
        let spaces: [InboxSource.Space] = [.boards, .accounts]
        let entries: [(InboxSource, UInt64)] = (0..<40).map { (index: Int) in
            (InboxSource(space: spaces[index % 2], index: UInt16(index * 997)), UInt64(index + 1))
        }
        let expected = InboxStateCodec.encode(InboxReader.State(position: 3, applied: Dictionary(uniqueKeysWithValues: entries)))
        var orders: Set<[InboxSource]> = []
        for capacity in [0, 64, 500, 4_000] {
            var applied = [InboxSource: UInt64](minimumCapacity: capacity)
            for (source, sequence) in entries.shuffled(using: &generator) { applied[source] = sequence }
            orders.insert(Array(applied.keys))
            #expect(InboxStateCodec.encode(InboxReader.State(position: 3, applied: applied)) == expected)
        }
        #expect(orders.count > 1, "the dictionaries iterated in different orders")
    }

    @Test func refusesReaderSourcesOutOfOrderOrTwice() {
        #expect(throws: InboxProtocolError.inconsistentState) {
            try Self.decodeReader(Self.reader(position: 1, [(space: 2, index: 0, applied: 1), (space: 1, index: 9, applied: 1)]))
        }
        #expect(throws: InboxProtocolError.inconsistentState) {
            try Self.decodeReader(Self.reader(position: 1, [(space: 1, index: 9, applied: 1), (space: 1, index: 2, applied: 1)]))
        }
        #expect(throws: InboxProtocolError.inconsistentState) {
            try Self.decodeReader(Self.reader(position: 1, [(space: 1, index: 2, applied: 1), (space: 1, index: 2, applied: 3)]))
        }
    }

    @Test func refusesASourceWithNothingAppliedOrOfAnUnknownSpace() {
        #expect(throws: InboxProtocolError.inconsistentState) {
            try Self.decodeReader(Self.reader(position: 1, [(space: 1, index: 2, applied: 0)]))
        }
        #expect(throws: InboxProtocolError.unknownSpace(3)) {
            try Self.decodeReader(Self.reader(position: 1, [(space: 3, index: 2, applied: 1)]))
        }
    }

    @Test func refusesABadReaderHeaderCountsAndTrailingBytes() {
        let bytes = InboxStateCodec.encode(Self.readerState)
        #expect(throws: InboxProtocolError.badMagic) { try Self.decodeReader(InboxStateCodec.encode(Self.outboxState)) }
        var newer = bytes
        newer[2] = 0
        #expect(throws: InboxProtocolError.unsupportedVersion(0)) { try Self.decodeReader(newer) }
        #expect(throws: InboxProtocolError.trailingBytes(2)) { try Self.decodeReader(bytes + [1, 2]) }
        let hugeCount = [0x42, 0x4E, 1] + Self.bigEndian(UInt64(1)) + Self.bigEndian(UInt32.max) + [1, 0, 2] + Self.bigEndian(UInt64(1))
        #expect(throws: InboxProtocolError.truncated) { try Self.decodeReader(hugeCount) }
    }

    @Test func everyReaderStateTruncationIsRefused() {
        for state in [Self.readerState, InboxReader.State()] {
            Self.expectEveryTruncationRefused(InboxStateCodec.encode(state)) { try InboxStateCodec.decodeReader($0) }
        }
    }

    @Test func randomlyDamagedReaderStatesAreRefusedOrEncodeBackToTheirBytes() {
        let decoded = Self.damagedCopiesDecodingBack(InboxStateCodec.encode(Self.readerState), seed: 0x0B0E,
                                                      decode: { try Self.decodeReader($0) }, encode: InboxStateCodec.encode)
        #expect(decoded > 0, "some damage (the position, an applied number) leaves a valid state")
    }

    /// Every proper prefix of `bytes` is refused as truncated.
    static func expectEveryTruncationRefused<Value>(_ bytes: [UInt8],
                                                    _ decode: (ArraySlice<UInt8>) throws -> Value) {
        for length in 0..<bytes.count {
            #expect(throws: InboxProtocolError.truncated, "a cut at \(length)") { _ = try decode(bytes[..<length]) }
        }
    }

    /// Damaged copies of `valid` are refused or decode to a value that encodes back to the same
    /// bytes; returns how many decoded.
    static func damagedCopiesDecodingBack<Value>(_ valid: [UInt8], seed: UInt64, decode: ([UInt8]) throws -> Value,
                                                 encode: (Value) -> [UInt8]) -> Int {
        var generator = SeededGenerator(seed: seed)
        var decoded = 0
        for bytes in damagedCopies(of: valid, using: &generator) {
            guard let value = try? decode(bytes) else { continue }
            decoded += 1
            #expect(encode(value) == bytes)
        }
        return decoded
    }

    /// Copies of `valid` with one to four bytes each set to a random value.
    static func damagedCopies(of valid: [UInt8], count: Int = 5_000,
                              using generator: inout SeededGenerator) -> [[UInt8]] {
        (0..<count).map { _ in
            generator.damaged(valid, changes: 4)
        }
    }
}
