import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct FrameEncoderTests {
    @Test(arguments: [0, 125, 126, 65_535, 65_536])
    func serverFramesRoundTripThroughAClientDecoder(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        var buffer: [UInt8] = []
        payload.withUnsafeBytes { FrameEncoder.appendFrame(opcode: .binary, payload: $0, maskingKey: nil, to: &buffer) }
        #expect(buffer.count == FrameEncoder.headerSize(payloadLength: length, isMasked: false) + length)
        #expect(decodeWhole(buffer, limits: DecoderLimits(role: .client))
            == [.frame(FrameHeader(opcode: .binary, payloadLength: length), payload: payload)])
    }

    @Test func clientFramesAreMaskedWithKeysFromTheGenerator() {
        var generator = SeededGenerator(seed: 42)
        var expectedGenerator = SeededGenerator(seed: 42)
        let expectedKey = MaskingKey.random(using: &expectedGenerator)
        let payload = Array("hello".utf8)
        var buffer: [UInt8] = []
        payload.withUnsafeBytes {
            FrameEncoder.appendFrame(opcode: .text, payload: $0, role: .client, to: &buffer, using: &generator)
        }
        #expect(buffer[1] & 0x80 != 0)
        #expect(Array(buffer[6...]) != payload, "payload must not travel in the clear")
        #expect(decodeWhole(buffer)
            == [.frame(FrameHeader(opcode: .text, maskingKey: expectedKey, payloadLength: 5), payload: payload)])
    }

    @Test func headerUsesMinimalLengthEncoding() {
        #expect(FrameEncoder.headerSize(payloadLength: 125, isMasked: false) == 2)
        #expect(FrameEncoder.headerSize(payloadLength: 126, isMasked: false) == 4)
        #expect(FrameEncoder.headerSize(payloadLength: 65_535, isMasked: true) == 8)
        #expect(FrameEncoder.headerSize(payloadLength: 65_536, isMasked: true) == 14)
        var buffer: [UInt8] = []
        FrameEncoder.appendHeader(opcode: .text, payloadLength: 65_536, maskingKey: nil, to: &buffer)
        #expect(buffer == [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    @Test func encodingIntoAReusedBufferDoesNotReallocate() {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        let storage = buffer.withUnsafeBufferPointer { $0.baseAddress }
        let payload = [UInt8](repeating: 1, count: 100)
        for _ in 0..<20 {
            buffer.removeAll(keepingCapacity: true)
            payload.withUnsafeBytes {
                FrameEncoder.appendFrame(opcode: .binary, payload: $0, maskingKey: testKey, to: &buffer)
            }
        }
        #expect(buffer.withUnsafeBufferPointer { $0.baseAddress } == storage)
    }

    @Test func sharedServerFrameWithoutCompressionIsAPlainFrame() {
        let frame = FrameEncoder.makeServerFrame(opcode: .text, payload: Array("hi".utf8), compressedWith: nil)
        #expect(frame == [0x81, 0x02, 0x68, 0x69])
    }

    @Test func sharedCompressedServerFrameCarriesRSV1AndInflatesOnAnyConnection() throws {
        let message = Array(String(repeating: "{\"order\":42,\"status\":\"picked up\"} ", count: 40).utf8)
        let parameters = DeflateParameters(serverMaxWindowBits: 12)
        let frame = FrameEncoder.makeServerFrame(opcode: .text, payload: message, compressedWith: parameters)
        #expect(frame[0] == 0xC1)
        #expect(frame.count < message.count)
        let decoded = decodeWhole(frame, limits: DecoderLimits(role: .client, compression: true))
        guard case .frame(let header, let payload)? = decoded.first else {
            Issue.record("no frame decoded: \(decoded)")
            return
        }
        #expect(header.isCompressed)
        // Any window at least as large as the one used reads it, with or without context takeover.
        for (bits, keepsContext) in [(12, true), (15, false), (15, true)] {
            let inflater = MessageInflater(windowBits: bits, keepsContext: keepsContext)
            #expect(try inflater.inflateMessage(payload, limit: 1 << 20) == message)
        }
    }
}
