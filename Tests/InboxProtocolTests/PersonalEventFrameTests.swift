// One personal event as an account owner publishes it on a user subject, byte by byte: read back
// as written, its message read in place from any slice, every cut and a user or number of 0
// refused, and damaged copies read as exactly the bytes they are.
import InboxProtocol
import Testing
import TestSupport

@Suite struct PersonalEventFrameTests {
    static let message = Array(#"{"data":{},"event":"order.changed","seq":7}"#.utf8)

    @Test func isReadBackAsWrittenFromAnySlice() throws {
        let bytes = PersonalEventFrame.encode(user: 4_097, number: 7, message: Self.message)
        #expect(bytes.count == 16 + Self.message.count)
        #expect(Array(bytes[..<16]) == [0, 0, 0, 0, 0, 0, 0x10, 0x01, 0, 0, 0, 0, 0, 0, 0, 7])
        let event = try #require(PersonalEventFrame.decode(bytes[...]))
        #expect(event.user == 4_097 && event.number == 7 && Array(event.message) == Self.message)
        let inside = [0xEE, 0xEE] + bytes + [0xEE]
        let shifted = try #require(PersonalEventFrame.decode(inside[2..<(inside.count - 1)]))
        #expect(shifted == event && shifted.message.startIndex == 18, "read in place, not copied")
        let largest = try #require(PersonalEventFrame.decode(PersonalEventFrame.encode(user: .max, number: .max, message: [0x7B])[...]))
        #expect(largest.user == .max && largest.number == .max)
    }

    @Test func everyCutAndEveryMissingPartIsRefused() {
        let bytes = PersonalEventFrame.encode(user: 42, number: 7, message: Self.message)
        for length in 0...16 { #expect(PersonalEventFrame.decode(bytes[..<length]) == nil, "cut at \(length)") }
        #expect(PersonalEventFrame.decode(PersonalEventFrame.encode(user: 0, number: 7, message: Self.message)[...]) == nil)
        #expect(PersonalEventFrame.decode(PersonalEventFrame.encode(user: 42, number: 0, message: Self.message)[...]) == nil)
        #expect(PersonalEventFrame.decode(PersonalEventFrame.encode(user: 42, number: 7, message: [])[...]) == nil)
    }

    @Test func damagedCopiesAreReadExactlyOrRefused() {
        var random = SeededGenerator(seed: 0xE7E)
        let bytes = PersonalEventFrame.encode(user: 42, number: 7, message: Self.message)
        var headersChanged = 0
        for _ in 0..<3_000 {
            let damaged = random.damaged(bytes, changes: 4, from: 0)
            // Nothing in the frame checks itself: a damaged header is another user or number
            // (NATS's own framing carries it intact), and it must read as exactly that.
            guard let event = PersonalEventFrame.decode(damaged[...]) else {
                #expect(damaged[..<8].allSatisfy { $0 == 0 } || damaged[8..<16].allSatisfy { $0 == 0 })
                continue
            }
            if event.user != 42 || event.number != 7 { headersChanged += 1 }
            #expect(PersonalEventFrame.encode(user: event.user, number: event.number, message: Array(event.message)) == damaged)
        }
        #expect(headersChanged > 100)
    }
}
