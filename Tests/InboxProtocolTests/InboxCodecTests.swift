// The inbox's wire forms held to their exact bytes: the message (InboxCodec) and what a snapshot
// keeps of an outbox and of a reader (InboxStateCodec). Round trips, one encoding per value, a
// record too large for one publish split by the outbox, and every malformed input refused with
// an error, never a crash.
import InboxProtocol
import Testing
import TestSupport

@Suite struct InboxCodecTests {
    static let source = InboxSource(space: .boards, index: 3)

    static let message = InboxMessage(source: source, outboxSequence: 7, journalSequence: 0x0102_0304_0506_0708, at: 1_796_099_188_971, events: [
        InboxEvent(user: 42, name: "order.changed", data: Array(#"{"id":"o-1","status":"accepted"}"#.utf8)),
        InboxEvent(user: 0xFFFF_FFFF_FFFF_FFFF, name: "order.taken", data: []),
        InboxEvent(user: 0, name: "订单.变更", data: [0, 0xFF]),
    ])

    /// A one-event message of `source` numbered `outboxSequence`, as an outbox keeps them.
    static func message(_ outboxSequence: UInt64, from source: InboxSource = source) -> InboxMessage {
        InboxMessage(source: source, outboxSequence: outboxSequence, journalSequence: outboxSequence, at: 1_796_099_188_971,
                     events: [InboxEvent(user: outboxSequence, name: "order.changed", data: Array("m\(outboxSequence)".utf8))])
    }

    static let outboxState = InboxOutbox.State(destinations: [
        0: .init(nextSequence: 4, pending: [message(2), message(3)]),
        5: .init(nextSequence: 1, pending: []),
        9: .init(nextSequence: 12, pending: []),
        0xFFFF: .init(nextSequence: 8, pending: [message(7)]),
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

    static func header(space: UInt8 = 1, index: UInt16 = 3, outboxSequence: UInt64 = 1, journalSequence: UInt64 = 1,
                       at: Int64 = 0, count: UInt16 = 1) -> [UInt8] {
        [0x42, 0x49, 1, space] + bigEndian(index) + bigEndian(outboxSequence) + bigEndian(journalSequence) + bigEndian(at)
            + bigEndian(count)
    }

    static func event(user: UInt64 = 7, name: [UInt8] = Array("a.b".utf8), data: [UInt8] = []) -> [UInt8] {
        bigEndian(user) + [UInt8(name.count)] + name + bigEndian(UInt32(data.count)) + data
    }

    /// An outbox state with its destinations in the order given, each pending message as raw bytes.
    static func outbox(_ destinations: [(index: UInt16, next: UInt64, pending: [[UInt8]])]) -> [UInt8] {
        var bytes: [UInt8] = [0x42, 0x4F, 1] + bigEndian(UInt16(destinations.count))
        for destination in destinations {
            bytes += bigEndian(destination.index) + bigEndian(destination.next) + bigEndian(UInt32(destination.pending.count))
            for message in destination.pending { bytes += bigEndian(UInt32(message.count)) + message }
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
        try InboxStateCodec.decodeOutbox(bytes[...], of: source)
    }

    static func decodeReader(_ bytes: [UInt8]) throws(InboxProtocolError) -> InboxReader.State {
        try InboxStateCodec.decodeReader(bytes[...])
    }

    // MARK: The message: layout and round trips

    @Test func encodesTheDocumentedLayout() {
        let message = InboxMessage(source: InboxSource(space: .accounts, index: 0x0102), outboxSequence: 5, journalSequence: 9,
                                   at: -2, events: [InboxEvent(user: 7, name: "a.b", data: [0x7B, 0x7D])])
        let expected: [UInt8] = [0x42, 0x49, 1, 2, 0x01, 0x02,
                                 0, 0, 0, 0, 0, 0, 0, 5,
                                 0, 0, 0, 0, 0, 0, 0, 9,
                                 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE,
                                 0, 1,
                                 0, 0, 0, 0, 0, 0, 0, 7, 3, 0x61, 0x2E, 0x62, 0, 0, 0, 2, 0x7B, 0x7D]
        #expect(InboxCodec.encode(message) == expected)
        #expect(InboxCodec.size(of: message) == expected.count)
    }

    @Test func severalEventsRoundTripInTheirOrder() throws {
        let bytes = InboxCodec.encode(Self.message)
        #expect(bytes.count == InboxCodec.size(of: Self.message))
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
        let message = InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 0, at: 1_796_099_188_971, events: [event])
        #expect(InboxCodec.fits(message))
        #expect(try InboxCodec.decode(InboxCodec.encode(message)) == message)
    }

    @Test func bothSpacesAndExtremeNumbersRoundTrip() throws {
        for space in [InboxSource.Space.boards, .accounts] {
            for index in [0, 1, UInt16.max] {
                for (outboxSequence, journalSequence) in [(1, 0), (UInt64.max, UInt64.max)] as [(UInt64, UInt64)] {
                    let message = InboxMessage(source: InboxSource(space: space, index: index), outboxSequence: outboxSequence,
                                               journalSequence: journalSequence, at: 1_796_099_188_971, events: Self.message.events)
                    #expect(try InboxCodec.decode(InboxCodec.encode(message)) == message)
                }
            }
        }
    }

    @Test func keepsTheNamesBytesNotJustAnEquivalentString() throws {
        let decomposed = "cafe\u{301}"   // equal to "café" as a String, one byte longer in UTF-8
        let message = InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 1, at: 1_796_099_188_971,
                                   events: [InboxEvent(user: 1, name: decomposed, data: [])])
        let decoded = try InboxCodec.decode(InboxCodec.encode(message))
        #expect(Array(decoded.events[0].name.utf8) == Array(decomposed.utf8))
    }

    @Test func aMessageOfExactlyTheLimitRoundTripsAndOneByteMoreDoesNotFit() throws {
        let overhead = InboxCodec.size(of: InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 1, at: 1_796_099_188_971,
                                                        events: [InboxEvent(user: 1, name: "x", data: [])]))
        let largest = InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 1, at: 1_796_099_188_971, events: [
            InboxEvent(user: 1, name: "x", data: Array(repeating: 0x5A, count: InboxCodec.maxMessageBytes - overhead))])
        let bytes = InboxCodec.encode(largest)
        #expect(bytes.count == InboxCodec.maxMessageBytes)
        #expect(try InboxCodec.decode(bytes) == largest)
        let tooLarge = InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 1, at: 1_796_099_188_971, events: [
            InboxEvent(user: 1, name: "x", data: Array(repeating: 0x5A, count: InboxCodec.maxMessageBytes - overhead + 1))])
        #expect(!InboxCodec.fits(tooLarge))
    }

    @Test func namesThatCannotBeEncodedDoNotFit() {
        for name in ["", String(repeating: "n", count: InboxCodec.maxNameBytes + 1), String(repeating: "é", count: 32) + "a"] {
            let message = InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 1, at: 1_796_099_188_971,
                                       events: [InboxEvent(user: 1, name: name, data: [])])
            #expect(!InboxCodec.fits(message), "\(name.utf8.count)-byte name")
        }
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
                try InboxCodec.decode(Self.header(space: space) + Self.event())
            }
        }
    }

    @Test func refusesOutboxSequenceZeroAndNoEvents() {
        #expect(throws: InboxProtocolError.zeroOutboxSequence) {
            try InboxCodec.decode(Self.header(outboxSequence: 0) + Self.event())
        }
        #expect(throws: InboxProtocolError.noEvents) { try InboxCodec.decode(Self.header(count: 0)) }
        #expect(throws: InboxProtocolError.noEvents) { try InboxCodec.decode(Self.header(count: 0) + Self.event()) }
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
        #expect(throws: InboxProtocolError.invalidName) {
            try InboxCodec.decode(Self.header() + Self.event(name: name))
        }
        #expect(throws: InboxProtocolError.invalidName, "in the second event") {
            try InboxCodec.decode(Self.header(count: 2) + Self.event() + Self.event(name: name))
        }
    }

    @Test func refusesTrailingBytes() {
        let bytes = InboxCodec.encode(Self.message)
        #expect(throws: InboxProtocolError.trailingBytes(1)) { try InboxCodec.decode(bytes + [0]) }
        #expect(throws: InboxProtocolError.trailingBytes(3)) { try InboxCodec.decode(bytes + [0x42, 0x49, 1]) }
        #expect(throws: InboxProtocolError.trailingBytes(Self.event().count)) {
            try InboxCodec.decode(Self.header(count: 1) + Self.event() + Self.event())
        }
    }

    @Test func refusesCountsAndLengthsLargerThanTheInput() {
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header(count: 0xFFFF) + Self.event()) }
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header(count: 2) + Self.event()) }
        let hugeData = Self.bigEndian(UInt64(7)) + [1, 0x61] + Self.bigEndian(UInt32.max) + [0x41]
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header() + hugeData) }
        let longerName = Self.bigEndian(UInt64(7)) + [200] + Array("a.b".utf8) + Self.bigEndian(UInt32(0))
        #expect(throws: InboxProtocolError.truncated) { try InboxCodec.decode(Self.header() + longerName) }
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
        #expect(decodedCount > 0, "some damage (a user, a sequence, data) leaves a valid message")
    }

    // MARK: Splitting a record that does not fit one publish

    @Test func aRecordTooLargeForOneMessageBecomesConsecutiveMessagesThatEachFit() throws {
        let events = (0..<7).map { InboxEvent(user: $0, name: "order.changed", data: Array(repeating: UInt8($0), count: 300_000)) }
        var outbox = InboxOutbox(source: Self.source)
        let first = outbox.add(journalSequence: 1, at: 1_796_099_188_971, eventsByDestination: [(4, [InboxEvent(user: 9, name: "a", data: [])])])
        let publishes = outbox.add(journalSequence: 2, at: 1_796_099_188_971, eventsByDestination: [(4, events), (6, Array(events.prefix(1)))])
        let toFour = publishes.filter { $0.destination == 4 }
        #expect(first.map(\.message.outboxSequence) == [1])
        #expect(toFour.map(\.message.outboxSequence) == [2, 3, 4])
        #expect(toFour.map(\.message.events.count) == [3, 3, 1])
        #expect(toFour.flatMap(\.message.events) == events)
        #expect(toFour.allSatisfy { $0.message.journalSequence == 2 })
        #expect(publishes.filter { $0.destination == 6 }.map(\.message.outboxSequence) == [1])
        for publish in publishes {
            #expect(InboxCodec.fits(publish.message))
            #expect(try InboxCodec.decode(InboxCodec.encode(publish.message)) == publish.message)
        }
    }

    @Test func eventsFillingExactlyOneMessageStayTogetherAndOneByteMoreSplits() {
        let eventOverhead = 8 + 1 + 1 + 4   // user, name length, "x", data length
        let header = InboxCodec.size(of: InboxMessage(source: Self.source, outboxSequence: 1, journalSequence: 1, at: 1_796_099_188_971,
                                                      events: [InboxEvent(user: 1, name: "x", data: [])])) - eventOverhead
        let half = (InboxCodec.maxMessageBytes - header) / 2 - eventOverhead
        let filling = [InboxEvent(user: 1, name: "x", data: Array(repeating: 1, count: half)),
                       InboxEvent(user: 2, name: "x", data: Array(repeating: 2, count: InboxCodec.maxMessageBytes - header
                                                                    - 2 * eventOverhead - half))]
        var outbox = InboxOutbox(source: Self.source)
        let whole = outbox.add(journalSequence: 1, at: 1_796_099_188_971, eventsByDestination: [(0, filling)])
        #expect(whole.count == 1)
        #expect(whole.map { InboxCodec.encode($0.message).count } == [InboxCodec.maxMessageBytes])
        let overflowing = [filling[0], InboxEvent(user: 2, name: "xy", data: filling[1].data)]
        let split = outbox.add(journalSequence: 2, at: 1_796_099_188_971, eventsByDestination: [(0, overflowing)])
        #expect(split.map(\.message.outboxSequence) == [2, 3])
        #expect(split.map(\.message.events) == [[overflowing[0]], [overflowing[1]]])
    }

    @Test func aRecordWithMoreEventsThanOneMessageCountsIsSplitAtTheCount() {
        let events = (0..<(InboxCodec.maxEvents + 10)).map { InboxEvent(user: UInt64($0), name: "e", data: []) }
        var outbox = InboxOutbox(source: Self.source)
        let publishes = outbox.add(journalSequence: 1, at: 1_796_099_188_971, eventsByDestination: [(0, events)])
        #expect(publishes.map(\.message.events.count) == [InboxCodec.maxEvents, 10])
        #expect(publishes.map(\.message.outboxSequence) == [1, 2])
        #expect(publishes.allSatisfy { InboxCodec.fits($0.message) })
    }

    // MARK: Outbox state

    @Test func encodesTheDocumentedOutboxLayout() {
        let pending = Self.message(3)
        let state = InboxOutbox.State(destinations: [2: .init(nextSequence: 4, pending: [pending])])
        let encoded = InboxCodec.encode(pending)
        let expected: [UInt8] = [0x42, 0x4F, 1, 0, 1,
                                 0, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1,
                                 0, 0, 0, UInt8(encoded.count)] + encoded
        #expect(InboxStateCodec.encode(state) == expected)
        #expect(InboxStateCodec.encode(InboxOutbox.State()) == [0x42, 0x4F, 1, 0, 0])
    }

    @Test func outboxStateRoundTrips() throws {
        for state in [Self.outboxState, InboxOutbox.State()] {
            let bytes = InboxStateCodec.encode(state)
            let decoded = try Self.decodeOutbox(bytes)
            #expect(decoded == state)
            #expect(InboxStateCodec.encode(decoded) == bytes)
            #expect(try InboxStateCodec.decodeOutbox(([0xEE] + bytes)[1...], of: Self.source) == state)
        }
    }

    @Test func aLiveOutboxsStateRoundTripsAndRestoresTheSamePublishes() throws {
        var outbox = InboxOutbox(source: Self.source)
        let sent = (1...5).flatMap { record in
            outbox.add(journalSequence: record, at: 1_796_099_188_971, eventsByDestination: [
                (0, [InboxEvent(user: record, name: "order.changed", data: [])]),
                (UInt16(record % 2 + 1), [InboxEvent(user: 1, name: "x", data: [])]),
            ])
        }
        sent.filter { $0.message.outboxSequence == 1 }.forEach { outbox.acknowledged($0) }
        let decoded = try Self.decodeOutbox(InboxStateCodec.encode(outbox.state))
        #expect(decoded == outbox.state)
        var restored = InboxOutbox(source: Self.source, state: decoded)
        #expect(restored.resendAll().map(\.message) == outbox.resendAll().map(\.message))
    }

    @Test func outboxEncodingIsTheSameWhateverTheDictionaryOrder() {
        var generator = SeededGenerator(seed: 0x0B0C)
        let spread: [(UInt16, InboxOutbox.State.Destination)] = (0..<40).map { index in
            (UInt16(index * 1_000 + 1), InboxOutbox.State.Destination(nextSequence: UInt64(index + 1), pending: []))
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

    @Test func refusesPendingMessagesOfAnotherSource() {
        for other in [InboxSource(space: .boards, index: 4), InboxSource(space: .accounts, index: 3)] {
            let state = InboxOutbox.State(destinations: [0: .init(nextSequence: 3, pending: [Self.message(1),
                                                                                             Self.message(2, from: other)])])
            #expect(throws: InboxProtocolError.inconsistentState, "\(other)") {
                try Self.decodeOutbox(InboxStateCodec.encode(state))
            }
        }
    }

    @Test func refusesPendingNumberingWithHolesOrOutOfOrder() {
        for numbers in [[2, 4], [3, 2], [2, 2], [1, 3, 4]] as [[UInt64]] {
            let destination = InboxOutbox.State.Destination(nextSequence: numbers.last! + 1, pending: numbers.map { Self.message($0) })
            let state = InboxOutbox.State(destinations: [0: destination])
            #expect(throws: InboxProtocolError.inconsistentState, "pending \(numbers)") {
                try Self.decodeOutbox(InboxStateCodec.encode(state))
            }
        }
    }

    @Test func refusesANextNumberThatDoesNotFollowTheLastPending() {
        for next: UInt64 in [0, 1, 3, 5] {
            let state = InboxOutbox.State(destinations: [0: .init(nextSequence: next, pending: [Self.message(2), Self.message(3)])])
            #expect(throws: InboxProtocolError.inconsistentState, "next \(next)") {
                try Self.decodeOutbox(InboxStateCodec.encode(state))
            }
        }
        let nothingPendingNextZero = InboxOutbox.State(destinations: [0: .init(nextSequence: 0, pending: [])])
        #expect(throws: InboxProtocolError.inconsistentState) { try Self.decodeOutbox(InboxStateCodec.encode(nothingPendingNextZero)) }
    }

    @Test func refusesNumberingThatReachesTheLastSequence() {
        let last = InboxCodec.encode(Self.message(.max))
        #expect(throws: InboxProtocolError.inconsistentState, "the last pending message at the maximum") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 1, pending: [last])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState, "an earlier pending message at the maximum") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 4, pending: [last, InboxCodec.encode(Self.message(3))])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState, "no room to number one more") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: .max, pending: [InboxCodec.encode(Self.message(.max - 1))])]))
        }
        #expect(throws: InboxProtocolError.inconsistentState, "no room to number one more, nothing pending") {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: .max, pending: [])]))
        }
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

    @Test func refusesADamagedPendingMessageWithItsOwnError() {
        var damaged = InboxCodec.encode(Self.message(1))
        damaged[0] = 0
        #expect(throws: InboxProtocolError.badMagic) {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 2, pending: [damaged])]))
        }
        #expect(throws: InboxProtocolError.trailingBytes(1)) {
            try Self.decodeOutbox(Self.outbox([(index: 0, next: 2, pending: [InboxCodec.encode(Self.message(1)) + [0]])]))
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
        let hugePending = [0x42, 0x4F, 1, 0, 1, 0, 0] + Self.bigEndian(UInt64(1)) + Self.bigEndian(UInt32.max) + [0, 0, 0, 0]
        #expect(throws: InboxProtocolError.truncated) { try Self.decodeOutbox(hugePending) }
    }

    @Test func everyOutboxStateTruncationIsRefused() {
        for state in [Self.outboxState, InboxOutbox.State()] {
            Self.expectEveryTruncationRefused(InboxStateCodec.encode(state)) { try InboxStateCodec.decodeOutbox($0, of: Self.source) }
        }
    }

    @Test func randomlyDamagedOutboxStatesAreRefusedOrEncodeBackToTheirBytes() {
        let decoded = Self.damagedCopiesDecodingBack(InboxStateCodec.encode(Self.outboxState), seed: 0x0B0B,
                                                      decode: { try Self.decodeOutbox($0) }, encode: InboxStateCodec.encode)
        #expect(decoded > 0, "some damage (a journal sequence, a user, data) leaves a valid state")
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
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            return bytes
        }
    }
}
