import Testing
@testable import WebSocketProtocol

@Suite struct MaskingKeyTests {
    func naiveMask(_ bytes: [UInt8], key: MaskingKey, phase: Int) -> [UInt8] {
        bytes.enumerated().map { $0.element ^ key[($0.offset + phase) % 4] }
    }

    @Test func wordAtATimeMatchesTheByteDefinitionForEveryLengthAndPhase() {
        let data = (0..<67).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        for length in 0...data.count {
            for phase in 0..<4 {
                var buffer = Array(data[..<length])
                let next = testKey.apply(to: &buffer, range: 0..<length, phase: phase)
                #expect(buffer == naiveMask(Array(data[..<length]), key: testKey, phase: phase))
                #expect(next == (phase + length) % 4)
            }
        }
    }

    @Test func maskingInPiecesEqualsMaskingWhole() {
        let data = [UInt8](repeating: 0xAB, count: 41)
        for split in 0...data.count {
            var buffer = data
            let phase = testKey.apply(to: &buffer, range: 0..<split, phase: 0)
            testKey.apply(to: &buffer, range: split..<data.count, phase: phase)
            #expect(buffer == naiveMask(data, key: testKey, phase: 0))
        }
    }

    @Test func keyBytesFollowWireOrder() {
        #expect([testKey[0], testKey[1], testKey[2], testKey[3]] == [0x37, 0xFA, 0x21, 0x3D])
    }
}
