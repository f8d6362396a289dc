// What a connection keeps between calls: a shared configuration instead of a copy, no receive
// buffer once a message or control frame is handled, no unmasked copy of compressed input, and
// compression scratch space in the caller's output rather than in the connection.
import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct ConnectionMemoryTests {
    @Test func aConnectionHoldsNoReceiveBufferBetweenFrames() {
        let connection = WebSocketConnection(role: .server)
        var output = WebSocketOutput()
        func feed(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { connection.receive($0, into: &output) }
        }
        feed(clientFrame(opcode: 9, Array("are you there".utf8)))
        #expect(output.events == [.ping(Array("are you there".utf8))])
        #expect(!connection.holdsReceiveBuffers, "a ping's payload goes to its event and pong")
        feed(clientFrame(opcode: 10, [1, 2]))
        #expect(!connection.holdsReceiveBuffers)
        feed(clientFrame(opcode: 1, Array("hello".utf8)))
        #expect(!connection.holdsReceiveBuffers, "a message's buffer goes to its event")
        // A fragmented message holds its buffer until it is complete, then gives it away.
        feed(clientFrame(fin: false, opcode: 1, Array("frag".utf8)))
        #expect(connection.holdsReceiveBuffers)
        feed(clientFrame(opcode: 9, [7]))
        feed(clientFrame(opcode: 0, Array("ment".utf8)))
        #expect(!connection.holdsReceiveBuffers)
        #expect(output.events == [.ping(Array("are you there".utf8)), .pong([1, 2]), .text(Array("hello".utf8)),
                                  .ping([7]), .text(Array("fragment".utf8))])
        #expect(output.outbound == serverFrame(opcode: 10, Array("are you there".utf8)) + serverFrame(opcode: 10, [7]))
    }

    @Test func connectionsSharingAConfigurationEachEnforceIt() {
        let shared = WebSocketConfiguration.Shared(WebSocketConfiguration(maxFrameSize: 200, maxMessageSize: 400))
        let first = WebSocketConnection(role: .server, sharing: shared)
        let second = WebSocketConnection(role: .server, sharing: shared)
        #expect(first.configuration == shared.configuration)
        var output = WebSocketOutput()
        clientFrame(opcode: 2, [UInt8](repeating: 1, count: 201)).withUnsafeBytes { first.receive($0, into: &output) }
        #expect(output.events == [.closed(code: .messageTooBig, reason: "", initiatedByPeer: false)])
        #expect(first.violation == .frameTooLarge(length: 201, limit: 200))
        output.removeAll()
        clientFrame(opcode: 2, [UInt8](repeating: 2, count: 200)).withUnsafeBytes { second.receive($0, into: &output) }
        #expect(output.events == [.binary([UInt8](repeating: 2, count: 200))])
        #expect(second.violation == nil)
    }

    @Test func maskedCompressedInputLongerThanTheUnmaskingChunkInflatesWhateverTheChunking() {
        var generator = SeededGenerator(seed: 42)
        // Incompressible, so the compressed payload is longer than the stack buffer it is
        // unmasked through, several times over.
        let message = (0..<(3 * WebSocketStateMachine.unmaskingChunkSize + 123)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let compressed = MessageDeflater(windowBits: 15, keepsContext: false).compress(message)
        #expect(compressed.count > 3 * WebSocketStateMachine.unmaskingChunkSize)
        let input = clientFrame(rsv: 0b100, opcode: 2, compressed)
        let chunk = WebSocketStateMachine.unmaskingChunkSize
        let header = input.count - compressed.count
        let cuts = [0, 1, header, header + 1, header + chunk - 1, header + chunk, header + chunk + 3,
                    header + 2 * chunk + 2, input.count - 1, input.count]
        verifyChunkings(of: input, give: ConnectionOutcome(events: [.binary(message)], outbound: [], closesTransport: false),
                        cuts: cuts) { receive($0, deflate: DeflateParameters()) }
    }

    @Test func compressedSendsOfTwoConnectionsThroughOneOutputReachTheirOwnPeers() {
        let deflate = DeflateParameters(serverNoContextTakeover: true)
        let servers = (0..<2).map { _ in WebSocketConnection(role: .server, deflate: deflate) }
        var shared = WebSocketOutput()
        var frames: [[UInt8]] = []
        for (index, server) in servers.enumerated() {
            let text = String(repeating: "message for client \(index) ", count: 20 + index)
            #expect(server.send(text: text, into: &shared))
            frames.append(shared.takeOutbound())
            shared.removeAll()
        }
        for (index, frame) in frames.enumerated() {
            let client = WebSocketConnection(role: .client, deflate: deflate, maskingKeyGenerator: SeededGenerator())
            var output = WebSocketOutput()
            #expect(frame[0] == 0xC1, "compressed, final, text")
            frame.withUnsafeBytes { client.receive($0, into: &output) }
            #expect(output.events == [.text(Array(String(repeating: "message for client \(index) ", count: 20 + index).utf8))])
        }
    }
}
