// A board partition's part of a listing, byte by byte: read back as written, one encoding per
// answer (boards in byte order), every cut and every extra byte refused, counts that lie refused
// before anything is reserved, and damaged copies read exactly or refused.
import InboxProtocol
import Testing
import TestSupport

@Suite struct BoardListAnswerTests {
    static let answer = BoardListAnswer.Answer(
        sequences: ["bounty": 41, "express": 0, "团购": 7], total: 12, hasMore: true,
        entries: [BoardListAnswer.Entry(key: 1_796_099_188_971, id: 0x0102, order: Array(#"{"id":258}"#.utf8)),
                  BoardListAnswer.Entry(key: -5, id: 3, order: [0x7B])])

    @Test func isReadBackAsWrittenWithOneEncoding() throws {
        let bytes = BoardListAnswer.encode(Self.answer)
        #expect(bytes.first == 0 && bytes[1] == 3)
        #expect(Array(bytes[2..<9]) == [6] + Array("bounty".utf8), "boards in byte order")
        let read = try #require(BoardListAnswer.decode(bytes[...]))
        #expect(read == Self.answer)
        let inside = [0xEE] + bytes + [0xEE]
        #expect(BoardListAnswer.decode(inside[1..<(inside.count - 1)]) == Self.answer)
        let empty = BoardListAnswer.Answer(sequences: [:], total: 0, hasMore: false, entries: [])
        #expect(BoardListAnswer.decode(BoardListAnswer.encode(empty)[...]) == empty)
    }

    @Test func everyCutAndEveryExtraByteIsRefused() {
        let bytes = BoardListAnswer.encode(Self.answer)
        for length in 0..<bytes.count { #expect(BoardListAnswer.decode(bytes[..<length]) == nil, "cut at \(length)") }
        #expect(BoardListAnswer.decode((bytes + [0])[...]) == nil)
        #expect(BoardListAnswer.decode(Array(#"{"id":1,"ok":false}"#.utf8)[...]) == nil, "a JSON reply is not an answer")
    }

    @Test func liesAndBrokenRulesAreRefused() {
        // Four billion entries in a few bytes.
        #expect(BoardListAnswer.decode([0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0xFF, 0xFF, 0xFF, 0xFF][...]) == nil)
        var more = Self.answer
        more.total = 1
        #expect(BoardListAnswer.decode(BoardListAnswer.encode(more)[...]) == nil, "more entries than matches")
        var empty = Self.answer
        empty.entries = [BoardListAnswer.Entry(key: 1, id: 1, order: [])]
        #expect(BoardListAnswer.decode(BoardListAnswer.encode(empty)[...]) == nil, "an empty order")
        var bytes = BoardListAnswer.encode(BoardListAnswer.Answer(sequences: ["a": 1, "b": 2], total: 0, hasMore: false, entries: []))
        bytes[3] = UInt8(ascii: "b")
        #expect(BoardListAnswer.decode(bytes[...]) == nil, "a board named twice")
        bytes[3] = UInt8(ascii: "c")
        #expect(BoardListAnswer.decode(bytes[...]) == nil, "boards out of order")
        var flag = BoardListAnswer.encode(BoardListAnswer.Answer(sequences: [:], total: 0, hasMore: false, entries: []))
        flag[6] = 2
        #expect(BoardListAnswer.decode(flag[...]) == nil, "a flag that is neither")
    }

    @Test func damagedCopiesAreReadExactlyOrRefused() {
        var random = SeededGenerator(seed: 0xB0A)
        let bytes = BoardListAnswer.encode(Self.answer)
        var (read, refused) = (0, 0)
        for _ in 0..<3_000 {
            let damaged = random.damaged(bytes, changes: 3, from: 0)
            guard let answer = BoardListAnswer.decode(damaged[...]) else {
                refused += 1
                continue
            }
            read += 1
            #expect(BoardListAnswer.encode(answer) == damaged)
        }
        #expect(read > 0 && refused > 0)
    }
}
