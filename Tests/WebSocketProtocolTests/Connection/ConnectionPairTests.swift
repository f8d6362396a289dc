import Testing
@testable import WebSocketProtocol

@Suite struct ConnectionPairTests {
    static let deflateVariants: [DeflateParameters?] = [
        nil,
        DeflateParameters(),
        DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true),
        DeflateParameters(serverMaxWindowBits: 9, clientMaxWindowBits: 9),
        DeflateParameters(clientNoContextTakeover: false, serverMaxWindowBits: 12, clientMaxWindowBits: 10),
    ]

    func message(_ index: Int) -> String {
        String(repeating: "{\"order\":\(index),\"status\":\"delivering\",\"note\":\"帮帮\"} ", count: 1 + index * 7)
    }

    @Test(arguments: deflateVariants)
    func clientAndServerExchangeMessagesBothWays(deflate: DeflateParameters?) {
        let pair = ConnectionPair(deflate: deflate)
        var expectedAtServer: [WebSocketEvent] = []
        var expectedAtClient: [WebSocketEvent] = []
        for index in 0..<6 {
            let text = message(index)
            pair.client.send(text: text, into: &pair.clientOutput)
            pair.server.send(text: text, into: &pair.serverOutput)
            let bytes = (0..<(index * 300)).map { UInt8(truncatingIfNeeded: $0 * index) }
            pair.client.send(binary: bytes, into: &pair.clientOutput)
            pair.server.send(binary: bytes, into: &pair.serverOutput)
            expectedAtServer += [.text(Array(text.utf8)), .binary(bytes)]
            expectedAtClient += [.text(Array(text.utf8)), .binary(bytes)]
        }
        pair.client.send(text: "", into: &pair.clientOutput)
        expectedAtServer.append(.text([]))
        pair.pump(chunkSize: 7)
        #expect(pair.serverEvents == expectedAtServer)
        #expect(pair.clientEvents == expectedAtClient)
        if deflate != nil {
            #expect(pair.clientToServerBytes.count < 9000, "compression must be in effect")
        }
    }

    @Test func clientMasksEverythingAndServerMasksNothing() {
        let pair = ConnectionPair()
        pair.client.send(text: "hello", into: &pair.clientOutput)
        pair.server.send(text: "hello", into: &pair.serverOutput)
        pair.pump()
        #expect(pair.clientToServerBytes[1] & 0x80 != 0)
        #expect(!pair.clientToServerBytes.contains(Array("hello".utf8)))
        #expect(pair.serverToClientBytes == serverFrame(opcode: 1, Array("hello".utf8)))
    }

    @Test func pingsAreAnsweredInBothDirections() {
        let pair = ConnectionPair()
        pair.client.sendPing([1, 2, 3], into: &pair.clientOutput)
        pair.server.sendPing([4], into: &pair.serverOutput)
        pair.pump(chunkSize: 1)
        #expect(pair.serverEvents == [.ping([1, 2, 3]), .pong([4])])
        #expect(pair.clientEvents == [.ping([4]), .pong([1, 2, 3])])
    }

    @Test func clientInitiatedCloseCompletesOnBothSides() {
        let pair = ConnectionPair()
        pair.client.close(code: .normalClosure, reason: "done", into: &pair.clientOutput)
        pair.pump()
        #expect(pair.serverEvents == [.closed(code: .normalClosure, reason: "done", initiatedByPeer: true)])
        #expect(pair.clientEvents == [.closed(code: .normalClosure, reason: "done", initiatedByPeer: false)])
        #expect(pair.client.isClosed && pair.server.isClosed)
        #expect(pair.serverOutput.shouldCloseTransport && pair.clientOutput.shouldCloseTransport)
    }

    @Test func serverInitiatedCloseCompletesOnBothSides() {
        let pair = ConnectionPair()
        pair.server.send(text: "last words", into: &pair.serverOutput)
        pair.server.close(code: .goingAway, into: &pair.serverOutput)
        pair.pump()
        #expect(pair.clientEvents == [.text(Array("last words".utf8)),
                                      .closed(code: .goingAway, reason: "", initiatedByPeer: true)])
        #expect(pair.serverEvents == [.closed(code: .goingAway, reason: "", initiatedByPeer: false)])
    }

    @Test func clientRejectsMaskedFramesFromAServer() {
        let outcome = receive([rawFrame(opcode: 1, payload: [0x41], mask: testKey)[...]], role: .client)
        #expect(outcome.events == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
        // The client's close is masked: decode it as a server would.
        #expect(decodeWhole(outcome.outbound).count == 1)
        if case .frame(let header, let payload)? = decodeWhole(outcome.outbound).first {
            #expect(header.opcode == .close && header.maskingKey != nil && payload == closePayload(1002))
        } else {
            Issue.record("no close frame")
        }
    }
}
