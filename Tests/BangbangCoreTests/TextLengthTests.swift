import Testing
import BangbangCore

@Suite struct TextLengthTests {
    @Test func countsCharactersNotBytes() {
        #expect("abc".hasAtMost(characters: 3))
        #expect(!"abcd".hasAtMost(characters: 3))
        // Six bytes, two characters: decided by counting.
        #expect("快递".hasAtMost(characters: 2))
        #expect(!"快递到".hasAtMost(characters: 2))
        // One character of many scalars.
        #expect("👩‍👩‍👧‍👦".hasAtMost(characters: 1))
        #expect("e\u{301}".hasAtMost(characters: 1))
        #expect("".hasAtMost(characters: 0))
    }

    @Test func findsTextThatIsNotAllWhitespace() {
        #expect("a".hasNonWhitespace)
        #expect("  a".hasNonWhitespace)
        #expect("\t\n快".hasNonWhitespace)
        #expect(!"".hasNonWhitespace)
        #expect(!" \t\r\n".hasNonWhitespace)
        #expect(!"\u{3000}\u{00A0}".hasNonWhitespace)
        #expect("\u{3000}x".hasNonWhitespace)
    }

    /// The fast paths agree with counting every character, over every short mix of these pieces.
    @Test func agreesWithCountingEveryCharacter() {
        let pieces = ["a", " ", "\t", "快", "e\u{301}", "\u{3000}", "👍🏽", "\r\n", "\u{1C}", "~"]
        var texts = [""]
        for _ in 0..<3 { texts = texts.flatMap { text in pieces.map { text + $0 } } + texts }
        for text in texts {
            for limit in 0...4 { #expect(text.hasAtMost(characters: limit) == (text.count <= limit), "\(Array(text.unicodeScalars))") }
            #expect(text.hasNonWhitespace == text.contains { !$0.isWhitespace }, "\(Array(text.unicodeScalars))")
        }
    }
}
