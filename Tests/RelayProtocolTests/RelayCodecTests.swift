// The relay's wire form held to its exact bytes, round trips of every frame kind, and every
// kind of malformed input refused with an error: every truncation, wrong direction, bad counts.
import RelayProtocol
import Testing
import TestSupport

@Suite struct RelayCodecTests {
    static let client = RelayedClient(address: "10.1.2.3", isIdentified: true, usedTLS: false)

    static let toOwner = RelayEnvelope(sender: "node-b", incarnation: 0x0102_0304_0506_0708, frames: [
        .open(connection: 1, client: client),
        .message(connection: 1, text: Array(#"{"id":1,"op":"info.server"}"#.utf8)),
        .alive(connections: [1, 2]),
        .close(connection: 2),
    ])

    static let toGateway = RelayEnvelope(sender: "node-a", incarnation: 9, frames: [
        .deliver(connections: [1, 7, 0xFFFF_FFFF_FFFF_FFFF], text: Array("{}".utf8)),
        .closeConnection(connection: 7, code: 1012, reason: "owner changed"),
        .alive(connections: []),
    ])

    @Test func encodesTheDocumentedLayout() {
        let bytes = RelayCodec.encode(RelayEnvelope(sender: "b", incarnation: 5, frames: [
            .message(connection: 3, text: [0x41]),
            .deliver(connections: [3], text: [0x42, 0x43]),
        ]))
        let expected: [UInt8] = [0x42, 0x52, 1, 1, 0x62, 0, 0, 0, 0, 0, 0, 0, 5,
                                 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0x41,
                                 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0x42, 0x43]
        #expect(bytes == expected)
    }

    @Test func encodesOpenFlagsAndCloseCodes() {
        let open = RelayCodec.encode(RelayEnvelope(sender: "b", incarnation: 0, frames: [
            .open(connection: 1, client: RelayedClient(address: "::1", isIdentified: false, usedTLS: true)),
            .closeConnection(connection: 1, code: 1012, reason: "x"),
        ]))
        #expect(Array(open[13...]) == [1, 0, 0, 0, 0, 0, 0, 0, 1, 0x02, 3, 0x3A, 0x3A, 0x31,
                                       6, 0, 0, 0, 0, 0, 0, 0, 1, 0x03, 0xF4, 1, 0x78])
    }

    @Test func everyFrameKindRoundTrips() throws {
        #expect(try RelayCodec.decode(RelayCodec.encode(Self.toOwner), travelling: .toOwner) == Self.toOwner)
        #expect(try RelayCodec.decode(RelayCodec.encode(Self.toGateway), travelling: .toGateway) == Self.toGateway)
    }

    @Test func decodesFromASliceThatDoesNotStartAtZero() throws {
        let bytes = [0xEE, 0xEE] + RelayCodec.encode(Self.toOwner)
        #expect(try RelayCodec.decode(bytes[2...], travelling: .toOwner) == Self.toOwner)
    }

    @Test func sizeMatchesTheEncodedFrame() {
        for frame in Self.toOwner.frames + Self.toGateway.frames {
            var bytes: [UInt8] = []
            RelayCodec.append(frame, to: &bytes)
            #expect(bytes.count == RelayCodec.size(of: frame), "\(frame)")
        }
        #expect(RelayCodec.headerSize(sender: "node-a") == RelayCodec.encode(RelayEnvelope(sender: "node-a", incarnation: 0,
                                                                                          frames: [])).count)
    }

    @Test func everyTruncationIsAnErrorNeverACrash() {
        for envelope in [(Self.toOwner, RelayDirection.toOwner), (Self.toGateway, .toGateway)] {
            let bytes = RelayCodec.encode(envelope.0)
            let frameStarts = frameBoundaries(envelope.0)
            for length in 0..<bytes.count {
                do {
                    let decoded = try RelayCodec.decode(bytes[..<length], travelling: envelope.1)
                    // A cut between two frames is a shorter, valid envelope.
                    #expect(frameStarts.contains(length), "a cut at \(length) decoded")
                    #expect(decoded.frames == Array(envelope.0.frames.prefix(decoded.frames.count)))
                } catch {
                    let expected: Set<RelayProtocolError> = length < 2 ? [.badMagic] : [.truncated, .empty]
                    #expect(expected.contains(error), "a cut at \(length): \(error)")
                }
            }
        }
    }

    private func frameBoundaries(_ envelope: RelayEnvelope) -> Set<Int> {
        var offset = RelayCodec.headerSize(sender: envelope.sender)
        var boundaries: Set<Int> = []
        for frame in envelope.frames {
            offset += RelayCodec.size(of: frame)
            boundaries.insert(offset)
        }
        return boundaries
    }

    @Test func refusesFramesMeantForTheOtherSide() {
        #expect(throws: RelayProtocolError.frameInWrongDirection(1)) {
            try RelayCodec.decode(RelayCodec.encode(Self.toOwner), travelling: .toGateway)
        }
        #expect(throws: RelayProtocolError.frameInWrongDirection(5)) {
            try RelayCodec.decode(RelayCodec.encode(Self.toGateway), travelling: .toOwner)
        }
    }

    @Test func refusesABadHeader() {
        var bytes = RelayCodec.encode(Self.toOwner)
        bytes[0] = 0x43
        #expect(throws: RelayProtocolError.badMagic) { try RelayCodec.decode(bytes, travelling: .toOwner) }
        bytes = RelayCodec.encode(Self.toOwner)
        bytes[2] = 2
        #expect(throws: RelayProtocolError.unsupportedVersion(2)) { try RelayCodec.decode(bytes, travelling: .toOwner) }
        bytes = RelayCodec.encode(Self.toOwner)
        bytes[5] = UInt8(ascii: ".")   // "node.b" is two subject tokens
        #expect(throws: RelayProtocolError.invalidNodeID) { try RelayCodec.decode(bytes, travelling: .toOwner) }
        bytes = RelayCodec.encode(Self.toOwner)
        bytes[3] = 0
        #expect(throws: RelayProtocolError.invalidNodeID) { try RelayCodec.decode(bytes, travelling: .toOwner) }
        let headerOnly = RelayCodec.encode(RelayEnvelope(sender: "a", incarnation: 1, frames: []))
        #expect(throws: RelayProtocolError.empty) { try RelayCodec.decode(headerOnly, travelling: .toOwner) }
    }

    @Test func refusesUnknownKindsAndBadFields() {
        let header = RelayCodec.encode(RelayEnvelope(sender: "a", incarnation: 1, frames: []))
        #expect(throws: RelayProtocolError.unknownFrameKind(9)) { try RelayCodec.decode(header + [9], travelling: .toOwner) }
        #expect(throws: RelayProtocolError.unknownFrameKind(0)) { try RelayCodec.decode(header + [0], travelling: .toOwner) }
        let noRecipient: [UInt8] = [5, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: RelayProtocolError.invalidField("deliver to no connection")) {
            try RelayCodec.decode(header + noRecipient, travelling: .toGateway)
        }
        let badFlags: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0, 1, 0x04, 1, 0x31]
        #expect(throws: RelayProtocolError.invalidField("open flags")) { try RelayCodec.decode(header + badFlags, travelling: .toOwner) }
        let emptyAddress: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]
        #expect(throws: RelayProtocolError.invalidField("client address")) {
            try RelayCodec.decode(header + emptyAddress, travelling: .toOwner)
        }
        let badReason: [UInt8] = [6, 0, 0, 0, 0, 0, 0, 0, 1, 0x03, 0xF4, 1, 0xFF]
        #expect(throws: RelayProtocolError.invalidField("close reason")) {
            try RelayCodec.decode(header + badReason, travelling: .toGateway)
        }
    }

    @Test func refusesCountsLargerThanTheInputBeforeAllocating() {
        let header = RelayCodec.encode(RelayEnvelope(sender: "a", incarnation: 1, frames: []))
        let hugeAlive: [UInt8] = [4, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 1]
        #expect(throws: RelayProtocolError.truncated) { try RelayCodec.decode(header + hugeAlive, travelling: .toOwner) }
        let hugeMessage: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x41]
        #expect(throws: RelayProtocolError.truncated) { try RelayCodec.decode(header + hugeMessage, travelling: .toOwner) }
    }

    @Test func closeReasonsAreCutToWhatACloseFrameHolds() throws {
        let long = String(repeating: "r", count: 300)
        let bytes = RelayCodec.encode(RelayEnvelope(sender: "a", incarnation: 1, frames: [
            .closeConnection(connection: 1, code: 1012, reason: long)]))
        let decoded = try RelayCodec.decode(bytes, travelling: .toGateway)
        #expect(decoded.frames == [.closeConnection(connection: 1, code: 1012,
                                                    reason: String(repeating: "r", count: RelayCodec.maxCloseReasonBytes))])
        let wide = String(repeating: "重", count: 100)   // 3 bytes each: 41 fit, never half of one
        let cut = try RelayCodec.decode(RelayCodec.encode(RelayEnvelope(sender: "a", incarnation: 1, frames: [
            .closeConnection(connection: 1, code: 1012, reason: wide)])), travelling: .toGateway)
        #expect(cut.frames == [.closeConnection(connection: 1, code: 1012, reason: String(repeating: "重", count: 41))])
    }

    @Test func randomInputNeverCrashes() {
        var generator = SeededGenerator(seed: 15)
        let valid = RelayCodec.encode(Self.toOwner)
        for _ in 0..<5_000 {
            let bytes = generator.damaged(valid, changes: 4)
            _ = try? RelayCodec.decode(bytes, travelling: .toOwner)
            _ = try? RelayCodec.decode(bytes, travelling: .toGateway)
        }
    }
}
