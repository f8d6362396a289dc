import Testing
@testable import WebSocketProtocol

@Suite struct HTTPHeadersTests {
    let headers: HTTPHeaders = [
        "Connection": "keep-alive, Upgrade",
        "Accept": "a",
        "accept": "b, c",
        "ACCEPT": "",
        "Upgrade": "h2c ,  WebSocket",
    ]

    @Test func lookupIgnoresNameCase() {
        #expect(headers["connection"] == "keep-alive, Upgrade")
        #expect(headers["CONNECTION"] == "keep-alive, Upgrade")
        #expect(headers["missing"] == nil)
        #expect(headers.contains(name: "uPgRaDe"))
    }

    @Test func keepsFieldsInOrder() {
        #expect(headers.fields.map(\.name) == ["Connection", "Accept", "accept", "ACCEPT", "Upgrade"])
        #expect(headers.values(named: "Accept") == ["a", "b, c", ""])
    }

    @Test func combinesRepeatedFieldsWithCommas() {
        #expect(headers.combinedValue(named: "accept") == "a, b, c, ")
        #expect(headers.combinedValue(named: "absent") == nil)
    }

    @Test func splitsListsAndDropsEmptyElements() {
        #expect(headers.listElements(named: "Accept") == ["a", "b", "c"])
        #expect(HTTPHeaders(dictionaryLiteral: ("X", " , ,a,,b ,")).listElements(named: "x") == ["a", "b"])
    }

    @Test func findsTokensCaseInsensitivelyAcrossTheList() {
        #expect(headers.containsToken("upgrade", named: "connection"))
        #expect(headers.containsToken("KEEP-ALIVE", named: "Connection"))
        #expect(headers.containsToken("websocket", named: "Upgrade"))
        #expect(!headers.containsToken("keep", named: "Connection"))
        #expect(!HTTPHeaders(dictionaryLiteral: ("Connection", "upgrades")).containsToken("upgrade", named: "Connection"))
    }

    @Test func replaceOrAppendLeavesOneField() {
        var copy = headers
        copy.replaceOrAppend(name: "Accept", value: "z")
        #expect(copy.values(named: "accept") == ["z"])
        #expect(copy.count == 3)
    }
}
