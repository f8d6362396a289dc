import BangbangProtocol
import Testing
@testable import loadtest

@Suite struct EnvelopeScannerTests {
    private func text(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>?) -> String? {
        range.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) }
    }

    @Test func findsTheTopLevelMembersOfAReplyAndSkipsTheNestedOnes() throws {
        // The data holds keys named like envelope members, braces inside strings and escapes.
        let data: JSONValue = ["order": ["id": 99, "ok": false, "note": "a } \" ] { [ \\", "list": [1, [2, ["id": 3] as JSONValue]]]]
        let message = JSONWriter.encode(["id": -42, "ok": true, "data": data])
        try message.withUnsafeBytes { bytes in
            let members = try #require(EnvelopeScanner.scan(bytes))
            #expect(members.id.flatMap { EnvelopeScanner.integer(bytes, $0) } == -42)
            #expect(text(bytes, members.ok) == "true")
            #expect(members.event == nil && members.error == nil)
            let dataText = try #require(text(bytes, members.data))
            #expect(try JSONParser.parse(Array(dataText.utf8)) == data)
        }
    }

    @Test func findsTheErrorOfAFailedReply() throws {
        let message = JSONWriter.encode(["id": 7, "ok": false,
                                          "error": ["code": "order_taken", "message": "taken", "field": "order_id"]])
        try message.withUnsafeBytes { bytes in
            let members = try #require(EnvelopeScanner.scan(bytes))
            #expect(text(bytes, members.ok) == "false")
            let error = try JSONParser.parse(Array(try #require(text(bytes, members.error)).utf8))
            #expect(error["code"] == "order_taken")
            #expect(members.data == nil)
        }
    }

    @Test func readsSpacedOutObjectsAndEvents() throws {
        let message = Array(#" { "event" : "order.changed" , "seq" : 3 , "data" : { "x" : [ ] } } "#.utf8)
        try message.withUnsafeBytes { bytes in
            let members = try #require(EnvelopeScanner.scan(bytes))
            #expect(text(bytes, members.event) == "\"order.changed\"")
            #expect(text(bytes, members.data) == #"{ "x" : [ ] }"#)
        }
    }

    @Test(arguments: [#"[1]"#, #"{"id": 1"#, #"{"id" 1}"#, #"{"data": {"a": 1}"#, #"{"ok": "tr"#, ""])
    func givesUpOnWhatIsNotAWholeObject(text: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { EnvelopeScanner.scan($0) } == nil)
    }

    @Test(arguments: [("0", Int64(0)), ("-17", -17), ("9223372036854775807", Int64.max), ("1.5", nil), ("99999999999999999999", nil), ("-", nil)])
    func readsIntegers(text: String, expected: Int64?) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { EnvelopeScanner.integer($0, 0..<$0.count) } == expected)
    }
}
