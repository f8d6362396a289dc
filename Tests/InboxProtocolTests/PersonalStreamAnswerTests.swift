// The owner's answer to "the events of a user after N", byte by byte: read back as written,
// every cut and every extra byte refused, a count that lies refused before anything is reserved,
// numbers that do not rise or pass the stream's last refused, and damaged copies read exactly or
// refused, never trapped on.
import InboxProtocol
import Testing
import TestSupport

@Suite struct PersonalStreamAnswerTests {
    static let events = [
        PersonalStreamAnswer.Event(number: 4, message: Array(#"{"event":"order.changed","seq":4}"#.utf8)),
        PersonalStreamAnswer.Event(number: 5, message: []),
        PersonalStreamAnswer.Event(number: 9, message: Array(repeating: 0x7B, count: 300)),
    ]

    @Test func isReadBackAsWritten() throws {
        let bytes = PersonalStreamAnswer.encode(last: 9, events: Self.events)
        #expect(bytes.first == 0 && bytes.count == 13 + 3 * 12 + Self.events.reduce(0) { $0 + $1.message.count })
        let read = try #require(PersonalStreamAnswer.decode(bytes))
        #expect(read.last == 9 && read.events == Self.events)
        let empty = try #require(PersonalStreamAnswer.decode(PersonalStreamAnswer.encode(last: 0, events: [])))
        #expect(empty.last == 0 && empty.events.isEmpty)
    }

    @Test func everyCutAndEveryExtraByteIsRefused() {
        let bytes = PersonalStreamAnswer.encode(last: 9, events: Self.events)
        for length in 0..<bytes.count { #expect(PersonalStreamAnswer.decode(Array(bytes[..<length])) == nil, "cut at \(length)") }
        #expect(PersonalStreamAnswer.decode(bytes + [0]) == nil)
        #expect(PersonalStreamAnswer.decode(Array(#"{"id":1,"ok":false}"#.utf8)) == nil, "a JSON reply is not an answer")
    }

    @Test func liesAboutCountsOrNumbersAreRefused() {
        // A count of four billion events in 13 bytes.
        #expect(PersonalStreamAnswer.decode([0, 0, 0, 0, 0, 0, 0, 0, 9, 0xFF, 0xFF, 0xFF, 0xFF]) == nil)
        let falling = [PersonalStreamAnswer.Event(number: 5, message: []), PersonalStreamAnswer.Event(number: 5, message: [])]
        #expect(PersonalStreamAnswer.decode(PersonalStreamAnswer.encode(last: 9, events: falling)) == nil)
        #expect(PersonalStreamAnswer.decode(PersonalStreamAnswer.encode(last: 8, events: Self.events)) == nil,
                "an event numbered past the stream's last")
        #expect(PersonalStreamAnswer.decode(PersonalStreamAnswer.encode(last: 9, events: [.init(number: 0, message: [])])) == nil)
    }

    @Test func damagedCopiesAreReadExactlyOrRefused() {
        let bytes = PersonalStreamAnswer.encode(last: 9, events: Self.events)
        var generator = SeededGenerator(seed: 15)
        var refused = 0
        for _ in 0..<3_000 {
            let damaged = generator.damaged(bytes, changes: 4)
            guard let read = PersonalStreamAnswer.decode(damaged) else { refused += 1; continue }
            // What is read is what the bytes say: encoding it again gives them back.
            #expect(PersonalStreamAnswer.encode(last: read.last, events: read.events) == damaged)
        }
        #expect(refused > 0)
    }
}
