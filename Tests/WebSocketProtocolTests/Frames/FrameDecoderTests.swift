import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct FrameDecoderTests {
    let client = DecoderLimits(role: .client)

    @Test(arguments: [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
    func decodesEveryLengthEncodingInAnyChunking(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let input = rawFrame(opcode: 2, payload: payload, mask: testKey)
        // Splitting a 70 kB frame at every index is slow; drip-feed only the small ones.
        let other = rawFrame(opcode: 9, payload: [9], mask: testKey)
        let outcome = length <= 300 ? verifyDripFeed(input, followedBy: other) { decode($0) } : decodeWhole(input)
        let header = FrameHeader(opcode: .binary, maskingKey: testKey, payloadLength: length)
        #expect(outcome == [.frame(header, payload: payload)])
    }

    @Test func concatenatedFramesDecodeInOrderWhateverTheChunking() {
        let first = rawFrame(fin: false, opcode: 1, payload: Array("Hel".utf8), mask: testKey)
        let ping = rawFrame(opcode: 9, payload: [1, 2], mask: testKey)
        let last = rawFrame(opcode: 0, payload: Array("lo".utf8), mask: testKey)
        let outcome = verifyDripFeed(first + ping + last, followedBy: rawFrame(opcode: 2, payload: [1], mask: testKey)) {
            decode($0)
        }
        #expect(outcome == [
            .frame(FrameHeader(isFinal: false, opcode: .text, maskingKey: testKey, payloadLength: 3),
                   payload: Array("Hel".utf8)),
            .frame(FrameHeader(opcode: .ping, maskingKey: testKey, payloadLength: 2), payload: [1, 2]),
            .frame(FrameHeader(opcode: .continuation, maskingKey: testKey, payloadLength: 2),
                   payload: Array("lo".utf8)),
        ])
    }

    @Test func trailingBytesAfterAFailureAreNeverLookedAt() {
        let bad = rawFrame(opcode: 3, mask: testKey)
        let good = rawFrame(opcode: 2, payload: [1], mask: testKey)
        let outcome = verifyDripFeed(bad + good) { decode($0) }
        #expect(outcome == [.failure(.unknownOpcode(3))])
    }

    @Test(arguments: [(16, 5), (64, 5), (64, 300)])
    func acceptsNonMinimalLengthEncodings(encoding: Int, length: Int) {
        let payload = [UInt8](repeating: 0x41, count: length)
        let input = rawFrame(opcode: 2, payload: payload, mask: testKey, lengthEncoding: encoding)
        let outcome = verifyDripFeed(input, followedBy: input) { decode($0) }
        #expect(outcome == [.frame(FrameHeader(opcode: .binary, maskingKey: testKey, payloadLength: length),
                                   payload: payload)])
    }

    @Test func rejectsSixtyFourBitLengthWithHighBitSet() {
        let header = rawFrame(opcode: 2, mask: testKey, declaredLength: 1 << 63)
        let outcome = verifyDripFeed(header, followedBy: rawFrame(opcode: 2, mask: testKey)) { decode($0) }
        #expect(outcome == [.failure(.payloadLengthHighBitSet)])
        #expect(ProtocolViolation.payloadLengthHighBitSet.closeCode == .protocolError)
    }

    @Test func rejectsLargestLegalLengthAsTooBigBeforeAnyPayload() {
        let header = rawFrame(opcode: 2, mask: testKey, declaredLength: (1 << 63) - 1)
        let outcome = verifyDripFeed(header) { decode($0) }
        #expect(outcome == [.failure(.frameTooLarge(length: (1 << 63) - 1, limit: 1 << 20))])
        #expect(ProtocolViolation.frameTooLarge(length: 0, limit: 0).closeCode == .messageTooBig)
    }

    @Test func serverRejectsUnmaskedClientFrame() {
        #expect(verifyDripFeed(rawFrame(opcode: 1, payload: [0x41])) { decode($0) } == [.failure(.unmaskedClientFrame)])
    }

    @Test func clientRejectsMaskedServerFrame() {
        let input = rawFrame(opcode: 1, payload: [0x41], mask: testKey)
        #expect(verifyDripFeed(input) { decode($0, limits: client) } == [.failure(.maskedServerFrame)])
    }

    @Test func clientAcceptsUnmaskedServerFrame() {
        let input = rawFrame(opcode: 1, payload: [0x41])
        #expect(decodeWhole(input, limits: client)
            == [.frame(FrameHeader(opcode: .text, payloadLength: 1), payload: [0x41])])
    }

    @Test(arguments: [UInt8(3), 4, 5, 6, 7, 11, 12, 13, 14, 15])
    func rejectsReservedOpcodes(opcode: UInt8) {
        #expect(decodeWhole(rawFrame(opcode: opcode, mask: testKey)) == [.failure(.unknownOpcode(opcode))])
    }

    @Test(arguments: [UInt8(0b010), 0b001, 0b100, 0b111])
    func rejectsReservedBitsWithoutDeflate(rsv: UInt8) {
        #expect(decodeWhole(rawFrame(rsv: rsv, opcode: 1, mask: testKey)) == [.failure(.reservedBitsSet)])
    }

    @Test(arguments: [UInt8(0b010), 0b001])
    func rejectsRSV2AndRSV3EvenWithDeflate(rsv: UInt8) {
        let limits = DecoderLimits(compression: true)
        #expect(decodeWhole(rawFrame(rsv: rsv, opcode: 1, mask: testKey), limits: limits)
            == [.failure(.reservedBitsSet)])
    }

    @Test func acceptsRSV1OnFirstDataFrameWithDeflate() {
        let limits = DecoderLimits(compression: true)
        let outcome = decodeWhole(rawFrame(rsv: 0b100, opcode: 2, payload: [0], mask: testKey), limits: limits)
        #expect(outcome == [.frame(FrameHeader(isCompressed: true, opcode: .binary, maskingKey: testKey,
                                               payloadLength: 1), payload: [0])])
    }

    @Test func rejectsRSV1OnContinuationAndControlFramesEvenWithDeflate() {
        let limits = DecoderLimits(compression: true)
        let first = rawFrame(fin: false, rsv: 0b100, opcode: 1, payload: [0], mask: testKey)
        let continuation = rawFrame(rsv: 0b100, opcode: 0, payload: [0], mask: testKey)
        #expect(decodeWhole(first + continuation, limits: limits).last == .failure(.reservedBitsSet))
        for opcode: UInt8 in [8, 9, 10] {
            #expect(decodeWhole(rawFrame(rsv: 0b100, opcode: opcode, mask: testKey), limits: limits)
                == [.failure(.reservedBitsSet)])
        }
    }

    @Test func controlFramesOfExactly125BytesAreAccepted() {
        let payload = [UInt8](repeating: 7, count: 125)
        #expect(decodeWhole(rawFrame(opcode: 9, payload: payload, mask: testKey))
            == [.frame(FrameHeader(opcode: .ping, maskingKey: testKey, payloadLength: 125), payload: payload)])
    }

    @Test(arguments: [UInt8(8), 9, 10])
    func rejectsControlFramesOver125BytesFromTheLengthByte(opcode: UInt8) {
        // Only the first two bytes: the violation must be found before any length or payload.
        let input = Array(rawFrame(opcode: opcode, payload: [UInt8](repeating: 0, count: 126), mask: testKey)[..<2])
        #expect(verifyDripFeed(input) { decode($0) } == [.failure(.oversizedControlFrame)])
    }

    @Test(arguments: [UInt8(8), 9, 10])
    func rejectsFragmentedControlFrames(opcode: UInt8) {
        #expect(decodeWhole([opcode, 0x80]) == [.failure(.fragmentedControlFrame)])
    }

    @Test func rejectsContinuationWithoutAMessage() {
        #expect(decodeWhole(rawFrame(opcode: 0, payload: [1], mask: testKey)) == [.failure(.unexpectedContinuation)])
    }

    @Test func rejectsNewDataFrameInsideAFragmentedMessage() {
        let input = rawFrame(fin: false, opcode: 1, payload: [0x41], mask: testKey)
            + rawFrame(opcode: 2, payload: [1], mask: testKey)
        #expect(decodeWhole(input).last == .failure(.unfinishedFragmentedMessage))
    }

    // MARK: Size limits, exactly at and one past each boundary

    @Test(arguments: [126, 127, 65_535, 65_536, 65_537])
    func frameSizeLimitIsInclusive(limit: Int) {
        var limits = DecoderLimits(maxFrameSize: limit)
        let atLimit = rawFrame(opcode: 2, payload: [UInt8](repeating: 1, count: limit), mask: testKey)
        #expect(decodeWhole(atLimit, limits: limits)
            == [.frame(FrameHeader(opcode: .binary, maskingKey: testKey, payloadLength: limit),
                       payload: [UInt8](repeating: 1, count: limit))])
        limits.maxFrameSize = limit - 1
        // Only the header is fed: the limit must trip before any payload arrives.
        let headerOnly = Array(atLimit[..<FrameEncoder.headerSize(payloadLength: limit, isMasked: false)])
        #expect(decodeWhole(headerOnly, limits: limits) == [.failure(.frameTooLarge(length: UInt64(limit), limit: limit - 1))])
    }

    @Test func messageSizeLimitCountsEveryFragmentAndTripsOnTheHeader() {
        let limits = DecoderLimits(maxMessageSize: 10)
        let five = [UInt8](repeating: 0x61, count: 5)
        let first = rawFrame(fin: false, opcode: 1, payload: five, mask: testKey)
        let exact = first + rawFrame(opcode: 0, payload: five, mask: testKey)
        let outcome = verifyDripFeed(exact) { decode($0, limits: limits) }
        #expect(outcome.count == 2 && !outcome.contains { if case .failure = $0 { true } else { false } })
        let over = first + Array(rawFrame(opcode: 0, payload: five + [0x61], mask: testKey)[..<2])
        #expect(verifyDripFeed(over) { decode($0, limits: limits) }.last == .failure(.messageTooLarge(limit: 10)))
        #expect(ProtocolViolation.messageTooLarge(limit: 0).closeCode == .messageTooBig)
    }

    @Test func messageSizeLimitAppliesToASingleFrameMessage() {
        let limits = DecoderLimits(maxMessageSize: 3)
        #expect(decodeWhole(rawFrame(opcode: 2, payload: [1, 2, 3], mask: testKey), limits: limits).count == 1)
        #expect(decodeWhole(Array(rawFrame(opcode: 2, payload: [1, 2, 3, 4], mask: testKey)[..<2]), limits: limits)
            == [.failure(.messageTooLarge(limit: 3))])
    }

    @Test func compressedMessageMayExceedTheLimitOnTheWireByDeflateOverheadOnly() {
        let limit = 64 * 1024
        let allowance = limit + limit / 16 + 1024
        let limits = DecoderLimits(maxFrameSize: limit, maxMessageSize: limit, compression: true)
        // Headers only: the decision is made before any payload arrives.
        let within = rawFrame(rsv: 4, opcode: 2, mask: testKey, declaredLength: UInt64(allowance))
        #expect(decodeWhole(within, limits: limits).allSatisfy { if case .failure = $0 { false } else { true } })
        let beyond = rawFrame(rsv: 4, opcode: 2, mask: testKey, declaredLength: UInt64(allowance + 1))
        #expect(decodeWhole(beyond, limits: limits) == [.failure(.frameTooLarge(length: UInt64(allowance + 1), limit: limit))])
        // Uncompressed messages get no allowance, and continuations inherit the first frame's.
        let plain = rawFrame(opcode: 2, mask: testKey, declaredLength: UInt64(limit + 1))
        #expect(decodeWhole(plain, limits: limits) == [.failure(.frameTooLarge(length: UInt64(limit + 1), limit: limit))])
        let first = rawFrame(fin: false, rsv: 4, opcode: 2, payload: [1], mask: testKey)
        let continuation = rawFrame(opcode: 0, mask: testKey, declaredLength: UInt64(allowance - 1))
        #expect(!decodeWhole(first + continuation, limits: limits).contains { if case .failure = $0 { true } else { false } })
    }

    @Test func controlFramesDoNotCountTowardsTheMessage() {
        let limits = DecoderLimits(maxMessageSize: 2, maxFragments: 2)
        let input = rawFrame(fin: false, opcode: 2, payload: [1], mask: testKey)
            + rawFrame(opcode: 9, payload: [1, 2, 3], mask: testKey)
            + rawFrame(opcode: 0, payload: [2], mask: testKey)
        #expect(decodeWhole(input, limits: limits).count == 3)
    }

    @Test func fragmentLimitIsInclusive() {
        let limits = DecoderLimits(maxFragments: 3)
        let start = rawFrame(fin: false, opcode: 2, payload: [1], mask: testKey)
        let middle = rawFrame(fin: false, opcode: 0, payload: [2], mask: testKey)
        let end = rawFrame(opcode: 0, payload: [3], mask: testKey)
        #expect(decodeWhole(start + middle + end, limits: limits).count == 3)
        #expect(decodeWhole(start + middle + middle + end, limits: limits).last == .failure(.tooManyFragments(limit: 3)))
    }

    @Test func limitsResetBetweenMessages() {
        let limits = DecoderLimits(maxMessageSize: 4, maxFragments: 2)
        let message = rawFrame(fin: false, opcode: 2, payload: [1, 2], mask: testKey)
            + rawFrame(opcode: 0, payload: [3, 4], mask: testKey)
        #expect(decodeWhole(message + message + message, limits: limits).count == 6)
    }

    @Test func failureIsSticky() {
        var decoder = DecoderLimits().makeDecoder()
        let bad: [UInt8] = [0x83, 0x80]
        bad.withUnsafeBytes { bytes in
            var index = 0
            #expect(throws: ProtocolViolation.unknownOpcode(3)) { _ = try decoder.next(in: bytes, at: &index) }
            #expect(throws: ProtocolViolation.unknownOpcode(3)) { _ = try decoder.next(in: bytes, at: &index) }
        }
    }
}
