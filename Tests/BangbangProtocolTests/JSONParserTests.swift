import Testing
import TestSupport
@testable import BangbangProtocol

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}} "#)
        #expect(value == ["a": [1, -2, 3.5, 1000.0, true, false, nil], "b": ["c": "d"]])
    }

    @Test func keepsLargeIntegersExact() throws {
        #expect(try JSONParser.parse("9007199254740993") == .integer(9_007_199_254_740_993))
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(Int64.min))
        // One past Int64 is no longer an integer, but still a number.
        #expect(try JSONParser.parse("9223372036854775808") == .double(9.223372036854775808e18))
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\té😀"))
        #expect(try JSONParser.parse("\"帮帮\"") == .string("帮帮"))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{'a':1}", "01", "1.", ".5", "1e", "-", "+1", "NaN",
        "Infinity", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
        "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "[1] [2]", "{\"a\" 1}", "{1:2}", "1e999",
        "{\"a\":1,\"a\":2}", "// comment\n1",
    ])
    func rejectsMalformedDocuments(text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test func rejectsInvalidUTF8InStrings() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xC0, 0xAF, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func limitsNestingDepth() throws {
        let atLimit = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(throws: Never.self) { try JSONParser.parse(atLimit) }
        let pastLimit = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(pastLimit) }
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(hostile) }
    }

    @Test func reportsWhereParsingStopped() {
        do {
            _ = try JSONParser.parse(#"{"a": [1, 2,, 3]}"#)
            Issue.record("expected an error")
        } catch {
            #expect(error.offset == 12)
        }
    }

    @Test func writerRoundTripsThroughParser() throws {
        let value: JSONValue = ["text": "quote \" backslash \\ newline \n control \u{01} 帮", "n": -42, "x": 0.25,
                                "list": [nil, true, ["nested": []]], "empty": [:]]
        let bytes = JSONWriter.encode(value)
        #expect(try JSONParser.parse(bytes) == value)
        #expect(JSONWriter.string(["b": 1, "a": 2]) == #"{"a":2,"b":1}"#)
    }

    @Test func randomDocumentsNeverCrashTheParser() throws {
        var generator = SeededGenerator(seed: 7)
        let alphabet = Array(#"{}[]:,"\ 0123456789.eE+-truefalsnu"#.utf8) + [0xC3, 0xA9, 0x00, 0xFF]
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 40)
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            if let value = try? JSONParser.parse(bytes) {
                #expect(try JSONParser.parse(JSONWriter.encode(value)) == value)
            }
        }
    }
}

