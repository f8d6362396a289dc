import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct ConnectionDeflateTests {
    let hello = Array("Hello".utf8)
    let compressedHello: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]

    @Test func compressedFragmentedMessageInflatesWhateverTheChunking() {
        // RFC 7692 §7.2.3.1 "Hello" split over three frames; RSV1 only on the first.
        let input = clientFrame(fin: false, rsv: 0b100, opcode: 1, Array(compressedHello[..<3]))
            + clientFrame(opcode: 9, [1])
            + clientFrame(fin: false, opcode: 0, Array(compressedHello[3..<5]))
            + clientFrame(opcode: 0, Array(compressedHello[5...]))
        let outcome = verifyDripFeed(input) { receive($0, deflate: DeflateParameters()) }
        #expect(outcome.events == [.ping([1]), .text(hello)])
    }

    @Test func peerContextTakeoverIsHonouredAsRFC7692Section7_2_3_2() {
        let second: [UInt8] = [0xF2, 0x00, 0x11, 0x00, 0x00]
        let fromClient = clientFrame(rsv: 0b100, opcode: 1, compressedHello) + clientFrame(rsv: 0b100, opcode: 1, second)
        #expect(verifyDripFeed(fromClient) { receive($0, deflate: DeflateParameters()) }.events
            == [.text(hello), .text(hello)])
        let fromServer = rawFrame(rsv: 0b100, opcode: 1, payload: compressedHello)
            + rawFrame(rsv: 0b100, opcode: 1, payload: second)
        #expect(receive([fromServer[...]], role: .client, deflate: DeflateParameters()).events
            == [.text(hello), .text(hello)])
    }

    @Test func uncompressedMessagesStillWorkWithDeflateNegotiated() {
        let outcome = receive([clientFrame(opcode: 1, hello)[...]], deflate: DeflateParameters())
        #expect(outcome.events == [.text(hello)])
    }

    @Test func serverSendsCompressedFramesWithRSV1() {
        let connection = WebSocketConnection(role: .server, deflate: DeflateParameters())
        var output = WebSocketOutput()
        connection.send(text: "Hello", into: &output)
        #expect(output.outbound == [0xC1, 0x07] + compressedHello)
    }

    @Test func compressionBombOverAConnectionClosesWith1009() {
        let zeros = [UInt8](repeating: 0, count: 4 << 20)
        let bomb = MessageDeflater(windowBits: 15, keepsContext: false).compress(zeros)
        #expect(bomb.count < 8 * 1024)
        let outcome = receive([clientFrame(rsv: 0b100, opcode: 2, bomb)[...]], deflate: DeflateParameters())
        #expect(outcome.events == [.closed(code: .messageTooBig, reason: "", initiatedByPeer: false)])
    }

    @Test func corruptCompressedDataClosesWith1007() {
        let outcome = receive([clientFrame(rsv: 0b100, opcode: 2, [0xFF, 0xFF, 0xFF])[...]], deflate: DeflateParameters())
        #expect(outcome.events == [.closed(code: .invalidFramePayloadData, reason: "", initiatedByPeer: false)])
    }

    @Test func compressedInvalidUTF8ClosesWith1007() {
        let bad = MessageDeflater(windowBits: 15, keepsContext: false).compress([0x41, 0xF5, 0x80, 0x80, 0x80])
        let outcome = receive([clientFrame(rsv: 0b100, opcode: 1, bad)[...]], deflate: DeflateParameters())
        #expect(outcome.events == [.closed(code: .invalidFramePayloadData, reason: "", initiatedByPeer: false)])
    }

    @Test func idleServerHoldsNoZlibMemoryWithoutClientContextTakeover() {
        let parameters = DeflateParameters(clientNoContextTakeover: true)
        let pair = ConnectionPair(deflate: parameters)
        #expect(!pair.server.holdsCompressionMemory)
        pair.client.send(text: "ping me", into: &pair.clientOutput)
        pair.server.send(text: "pong you", into: &pair.serverOutput)
        pair.pump()
        #expect(pair.serverEvents == [.text(Array("ping me".utf8))])
        #expect(!pair.server.holdsCompressionMemory)
    }

    @Test func idleClientHoldsNoZlibMemoryWithoutContextTakeoverEitherWay() {
        let pair = ConnectionPair(deflate: DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true))
        pair.client.send(text: "ping me", into: &pair.clientOutput)
        pair.server.send(text: "pong you", into: &pair.serverOutput)
        pair.pump()
        #expect(pair.clientEvents == [.text(Array("pong you".utf8))])
        #expect(!pair.client.holdsCompressionMemory && !pair.server.holdsCompressionMemory)
    }

    @Test func serverKeepsOnlyTheInflaterWhenTheClientKeepsContext() {
        let pair = ConnectionPair(deflate: DeflateParameters())
        pair.client.send(text: "one", into: &pair.clientOutput)
        pair.client.send(text: "one", into: &pair.clientOutput)
        pair.server.send(text: "two", into: &pair.serverOutput)
        pair.pump()
        #expect(pair.serverEvents == [.text(Array("one".utf8)), .text(Array("one".utf8))])
        #expect(pair.clientEvents == [.text(Array("two".utf8))])
        #expect(pair.server.holdsCompressionMemory, "client context takeover needs the server's inflater")
        #expect(pair.client.holdsCompressionMemory, "the client's deflater keeps its context")
    }

    @Test func sharedCompressedServerFrameIsReadByEveryCompatibleClient() {
        let text = Array(String(repeating: "broadcast to the whole board; ", count: 30).utf8)
        let frame = FrameEncoder.makeServerFrame(opcode: .text, payload: text,
                                                 compressedWith: DeflateParameters(serverMaxWindowBits: 11))
        for parameters in [DeflateParameters(serverMaxWindowBits: 11), DeflateParameters(),
                           DeflateParameters(serverNoContextTakeover: true)] {
            let client = WebSocketConnection(role: .client, deflate: parameters, maskingKeyGenerator: SeededGenerator())
            var output = WebSocketOutput()
            client.receive(frame, into: &output)
            client.receive(frame, into: &output)
            #expect(output.events == [.text(text), .text(text)])
        }
        let server = WebSocketConnection(role: .server, deflate: DeflateParameters())
        var output = WebSocketOutput()
        #expect(server.send(sharedFrame: frame, into: &output))
        #expect(output.outbound == frame)
    }
}
