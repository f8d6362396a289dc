// One board change as a board partition's owner publishes it on a feed subject, byte by byte: read
// back as written with its orders in place, a new order's empty "before", every cut, a sequence of
// 0 and a missing "after" refused, and a "before" longer than what follows refused before
// anything is read.
import InboxProtocol
import Testing
import TestSupport

@Suite struct FeedEventFrameTests {
    static let before = Array("\u{2}the order before".utf8)
    static let after = Array("\u{2}the order after the change".utf8)

    @Test func isReadBackAsWrittenFromAnySlice() throws {
        let bytes = FeedEventFrame.encode(partition: 0x0102, sequence: 9, before: Self.before, after: Self.after)
        #expect(Array(bytes[..<14]) == [1, 2, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, UInt8(Self.before.count)])
        let change = try #require(FeedEventFrame.decode(bytes[...]))
        #expect(change.partition == 0x0102 && change.sequence == 9)
        #expect(Array(change.before) == Self.before && Array(change.after) == Self.after)
        let inside = [0xEE] + bytes + [0xEE, 0xEE]
        let shifted = try #require(FeedEventFrame.decode(inside[1..<(inside.count - 2)]))
        #expect(shifted == change && shifted.after.endIndex == inside.count - 2, "read in place, not copied")
        let created = try #require(FeedEventFrame.decode(FeedEventFrame.encode(partition: 0, sequence: 1, before: nil, after: Self.after)[...]))
        #expect(created.before.isEmpty && Array(created.after) == Self.after)
    }

    @Test func everyCutAndEveryMissingPartIsRefused() {
        let bytes = FeedEventFrame.encode(partition: 3, sequence: 9, before: Self.before, after: Self.after)
        for length in 0...(14 + Self.before.count) {
            #expect(FeedEventFrame.decode(bytes[..<length]) == nil, "cut at \(length)")
        }
        #expect(FeedEventFrame.decode(FeedEventFrame.encode(partition: 3, sequence: 0, before: nil, after: Self.after)[...]) == nil)
        #expect(FeedEventFrame.decode(FeedEventFrame.encode(partition: 3, sequence: 1, before: Self.before, after: [])[...]) == nil)
        // A "before" that claims four billion bytes.
        #expect(FeedEventFrame.decode(([0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF] + Self.after)[...]) == nil)
    }
}
