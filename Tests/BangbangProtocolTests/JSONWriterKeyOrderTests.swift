import Testing
@testable import BangbangProtocol

@Suite struct JSONWriterKeyOrderTests {
    /// What the writer must produce: members in ascending key order.
    private func expected(_ members: [(String, Int)]) -> String {
        "{" + members.sorted { $0.0 < $1.0 }.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    @Test(arguments: [0, 1, 2, 7, 31, 32, 33, 200])
    func objectMembersAreWrittenInKeyOrderAtEverySize(count: Int) {
        var generator = SystemRandomNumberGenerator()
        let members = (0..<count).map { index in ("k\(UInt32.random(in: 0...UInt32.max, using: &generator))-\(index)", index) }
        let object = JSONValue.object(Dictionary(uniqueKeysWithValues: members.map { ($0.0, JSONValue.integer(Int64($0.1))) }))
        #expect(JSONWriter.string(object) == expected(members))
    }

    @Test func keysThatArePrefixesAndNonASCIISortLikeStrings() {
        let object: JSONValue = ["ab": 1, "a": 2, "": 3, "é": 4, "Z": 5, "a\u{0}": 6]
        #expect(JSONWriter.string(object) == "{\"\":3,\"Z\":5,\"a\":2,\"a\\u0000\":6,\"ab\":1,\"é\":4}")
    }

    @Test func nestedObjectsAreEachSorted() {
        let object: JSONValue = ["b": ["y": 1, "x": ["q": true, "p": nil]], "a": [["d": 1, "c": 2]]]
        #expect(JSONWriter.string(object) == #"{"a":[{"c":2,"d":1}],"b":{"x":{"p":null,"q":true},"y":1}}"#)
    }

    @Test(arguments: [
        ("", #""""#), ("plain", #""plain""#), ("\"", #""\"""#), ("\\", #""\\""#),
        ("a\"b\\c", #""a\"b\\c""#), ("\n\r\t", #""\n\r\t""#), ("\u{1}x\u{1F}", #""\u0001x\u001f""#),
        ("帮帮\u{7F}", "\"帮帮\u{7F}\""), ("end\"", #""end\"""#),
    ])
    func stringsEscapeExactlyQuotesBackslashesAndControlBytes(text: String, json: String) {
        var writer = JSONWriter()
        writer.write(string: text)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == json)
    }
}
