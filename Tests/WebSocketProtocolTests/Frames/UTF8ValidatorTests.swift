import Testing
@testable import WebSocketProtocol

@Suite struct UTF8ValidatorTests {
    func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Validator.isValid($0) }
    }

    @Test(arguments: [
        [UInt8](), [0x41], Array("κόσμε".utf8), Array("帮帮 errands 🏃".utf8),
        [0xC2, 0x80], [0xDF, 0xBF],                      // U+0080, U+07FF
        [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],          // U+0800, U+D7FF
        [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],          // U+E000, U+FFFF
        [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], // U+10000, U+10FFFF
    ])
    func acceptsValidBoundaryCodePoints(bytes: [UInt8]) {
        #expect(isValid(bytes))
    }

    @Test(arguments: [
        [UInt8(0xC0), 0x80], [0xC1, 0xBF],               // overlong 2-byte
        [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],          // overlong 3-byte
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], // overlong 4-byte
        [0xED, 0xA0, 0x80], [0xED, 0xAD, 0xBF], [0xED, 0xB0, 0x80], [0xED, 0xBF, 0xBF], // surrogates
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF7, 0xBF, 0xBF, 0xBF], // > U+10FFFF
        [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80],          // 5/6-byte forms
        [0xFE], [0xFF], [0x80], [0xBF],                  // never valid / stray continuation
        [0xC2, 0x41], [0xE1, 0x80, 0x41],                // continuation missing
        [0xC2], [0xE1, 0x80], [0xF0, 0x90, 0x80],        // truncated at message end
    ])
    func rejectsInvalidSequences(bytes: [UInt8]) {
        #expect(!isValid(bytes))
        #expect(!isValid(Array("ok ascii prefix!".utf8) + bytes))
    }

    @Test func everySurrogateIsRejected() {
        for scalar in 0xD800...0xDFFF {
            let bytes: [UInt8] = [0xED, UInt8(0x80 | (scalar >> 6) & 0x3F), UInt8(0x80 | scalar & 0x3F)]
            #expect(!isValid(bytes), "U+\(String(scalar, radix: 16))")
        }
    }

    @Test func agreesWithTheStandardLibraryOnAllTwoByteInputs() {
        for first in 0...255 {
            for second in 0...255 {
                let bytes = [UInt8(first), UInt8(second)]
                let reference = String(validating: bytes, as: UTF8.self) != nil
                if isValid(bytes) != reference { Issue.record("disagree on \(bytes)") }
            }
        }
    }

    @Test func codePointsSplitAcrossPiecesAreValidatedAsIfContiguous() {
        let text = Array("a¢€𐍈 — 帮帮 🏃‍♀️ done".utf8)
        for split in 0...text.count {
            var validator = UTF8Validator()
            let accepted1 = validator.validate(text[..<split])
            #expect(accepted1)
            let accepted2 = validator.validate(text[split...])
            #expect(accepted2)
            #expect(validator.isComplete)
        }
        var byteByByte = UTF8Validator()
        for byte in text { let accepted3 = byteByByte.validate([byte][...])
 #expect(accepted3) }
        #expect(byteByByte.isComplete)
    }

    @Test func incompleteSequenceAtAPieceBoundaryIsNotYetAFailure() {
        var validator = UTF8Validator()
        let accepted4 = validator.validate([0xF0, 0x9F][...])
        #expect(accepted4)
        #expect(!validator.isComplete)
        let accepted5 = validator.validate([0x8F, 0x83][...])
        #expect(accepted5)
        #expect(validator.isComplete)
    }

    @Test func failureIsReportedByThePieceContainingTheBadByteNotAtTheEnd() {
        var validator = UTF8Validator()
        let accepted6 = validator.validate(Array("hello ".utf8)[...])
        #expect(accepted6)
        let accepted7 = validator.validate([0xED][...])
        #expect(accepted7)        // could still be U+D7FF
        let accepted8 = validator.validate([0xA0][...])
        #expect(!accepted8)       // now a surrogate
        #expect(validator.hasFailed)
        let accepted9 = validator.validate(Array("more".utf8)[...])
        #expect(!accepted9)
    }

    @Test func longASCIIRunsWithABadByteAnywhereAreRejected() {
        for position in 0..<40 {
            var bytes = [UInt8](repeating: 0x61, count: 40)
            bytes[position] = 0x80
            #expect(!isValid(bytes), "bad byte at \(position)")
        }
    }
}
