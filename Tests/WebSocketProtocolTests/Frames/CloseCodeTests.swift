import Testing
@testable import WebSocketProtocol

@Suite struct CloseCodeTests {
    @Test func everyCodeIsClassifiedPerRFC6455Section7_4() {
        for raw in UInt16.min...UInt16.max {
            let expected: Bool
            switch raw {
            case 1000, 1001, 1002, 1003: expected = true
            case 1004, 1005, 1006: expected = false
            case 1007, 1008, 1009, 1010, 1011: expected = true
            case 1012, 1013, 1014: expected = true
            case 1015: expected = false
            case 3000...4999: expected = true
            default: expected = false
            }
            if CloseCode(rawValue: raw).isValidOnWire != expected {
                Issue.record("close code \(raw) classified as \(!expected)")
            }
        }
    }

    @Test(arguments: [UInt16(0), 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65_535])
    func invalidCodesAreRejected(raw: UInt16) {
        #expect(!CloseCode(rawValue: raw).isValidOnWire)
    }

    @Test(arguments: [UInt16(1000), 1003, 1007, 1011, 1012, 1014, 3000, 4999])
    func validCodesAreAccepted(raw: UInt16) {
        #expect(CloseCode(rawValue: raw).isValidOnWire)
    }

    @Test func namedCodesHaveTheirRegisteredValues() {
        #expect(CloseCode.normalClosure.rawValue == 1000)
        #expect(CloseCode.protocolError.rawValue == 1002)
        #expect(CloseCode.noStatusReceived.rawValue == 1005)
        #expect(CloseCode.abnormalClosure.rawValue == 1006)
        #expect(CloseCode.invalidFramePayloadData.rawValue == 1007)
        #expect(CloseCode.messageTooBig.rawValue == 1009)
    }

    @Test func violationsMapToTheirCloseCodes() {
        #expect(ProtocolViolation.invalidUTF8.closeCode == .invalidFramePayloadData)
        #expect(ProtocolViolation.invalidCompressedData.closeCode == .invalidFramePayloadData)
        #expect(ProtocolViolation.tooManyFragments(limit: 1).closeCode == .messageTooBig)
        #expect(ProtocolViolation.invalidCloseCode(1005).closeCode == .protocolError)
        #expect(ProtocolViolation.unmaskedClientFrame.closeCode == .protocolError)
    }
}
