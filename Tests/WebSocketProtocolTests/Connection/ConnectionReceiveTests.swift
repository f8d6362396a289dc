import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct ConnectionReceiveTests {
    let hello = Array("Hello".utf8)

    @Test func deliversTextAndBinaryMessagesWhateverTheChunking() {
        let input = clientFrame(opcode: 1, hello) + clientFrame(opcode: 2, [0, 1, 2, 255])
        let outcome = verifyDripFeed(input, followedBy: clientFrame(opcode: 9, [3])) { receive($0) }
        #expect(outcome == ConnectionOutcome(events: [.text(hello), .binary([0, 1, 2, 255])],
                                             outbound: [], closesTransport: false))
    }

    @Test func fragmentedMessageWithInterleavedPingsYieldsPingsFirstAndAutoPongs() {
        let input = clientFrame(fin: false, opcode: 1, Array("He".utf8))
            + clientFrame(opcode: 9, [1])
            + clientFrame(fin: false, opcode: 0, Array("l".utf8))
            + clientFrame(opcode: 9, [2, 2])
            + clientFrame(fin: false, opcode: 0, [])
            + clientFrame(opcode: 0, Array("lo".utf8))
        let outcome = verifyDripFeed(input, followedBy: clientFrame(opcode: 1, hello)) { receive($0) }
        #expect(outcome.events == [.ping([1]), .ping([2, 2]), .text(hello)])
        #expect(outcome.outbound == serverFrame(opcode: 0xA, [1]) + serverFrame(opcode: 0xA, [2, 2]))
        #expect(!outcome.closesTransport)
    }

    @Test func pingsAreNotAnsweredWhenAutoReplyIsOff() {
        let outcome = receive([clientFrame(opcode: 9, [7])[...]],
                              configuration: WebSocketConfiguration(repliesToPings: false))
        #expect(outcome == ConnectionOutcome(events: [.ping([7])], outbound: [], closesTransport: false))
    }

    @Test func pongsAreReported() {
        #expect(receive([clientFrame(opcode: 10, [9])[...]]).events == [.pong([9])])
    }

    @Test func earlierValidFramesAreFlushedBeforeTheProtocolErrorClose() {
        let input = clientFrame(opcode: 1, hello) + clientFrame(opcode: 9, [5])
            + clientFrame(opcode: 3)
        let outcome = verifyDripFeed(input, followedBy: clientFrame(opcode: 1, hello)) { receive($0) }
        #expect(outcome == ConnectionOutcome(
            events: [.text(hello), .ping([5]), .closed(code: .protocolError, reason: "", initiatedByPeer: false)],
            outbound: serverFrame(opcode: 0xA, [5]) + serverFrame(opcode: 8, closePayload(1002)),
            closesTransport: true))
    }

    @Test func nothingIsReportedAfterTheConnectionFailed() {
        let connection = WebSocketConnection(role: .server)
        var output = WebSocketOutput()
        connection.receive(clientFrame(opcode: 3), into: &output)
        output.removeAll()
        connection.receive(clientFrame(opcode: 1, hello) + clientFrame(opcode: 8), into: &output)
        connection.receiveEndOfInput(into: &output)
        #expect(output.events.isEmpty && output.outbound.isEmpty)
        #expect(!connection.send(text: "late", into: &output))
        #expect(output.outbound.isEmpty)
        #expect(connection.violation == .unknownOpcode(3))
    }

    @Test func unmaskedClientFrameClosesWith1002() {
        let outcome = receive([rawFrame(opcode: 1, payload: hello)[...]])
        #expect(outcome.events == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
        #expect(outcome.outbound == serverFrame(opcode: 8, closePayload(1002)))
    }

    @Test func reservedBitWithoutDeflateClosesWith1002() {
        let outcome = receive([clientFrame(rsv: 0b100, opcode: 1, hello)[...]])
        #expect(outcome.events == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
    }

    // MARK: UTF-8

    @Test func invalidUTF8FailsOnTheFragmentCarryingItNotAtMessageEnd() {
        // The message never finishes: the failure must come from the first fragment alone.
        let input = clientFrame(fin: false, opcode: 1, Array("ok".utf8) + [0xED, 0xA0, 0x80])
        let outcome = verifyDripFeed(input) { receive($0) }
        #expect(outcome == ConnectionOutcome(
            events: [.closed(code: .invalidFramePayloadData, reason: "", initiatedByPeer: false)],
            outbound: serverFrame(opcode: 8, closePayload(1007)), closesTransport: true))
    }

    @Test func codePointSplitAcrossFragmentsIsAccepted() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        let input = clientFrame(fin: false, opcode: 1, Array(euro[..<1]))
            + clientFrame(fin: false, opcode: 0, Array(euro[1..<2]))
            + clientFrame(opcode: 0, Array(euro[2...]))
        #expect(verifyDripFeed(input) { receive($0) }.events == [.text(euro)])
    }

    @Test func textTruncatedInsideACodePointAtMessageEndFails() {
        let outcome = receive([clientFrame(opcode: 1, [0x41, 0xE2, 0x82])[...]])
        #expect(outcome.events == [.closed(code: .invalidFramePayloadData, reason: "", initiatedByPeer: false)])
    }

    @Test func binaryMessagesAreNotUTF8Checked() {
        #expect(receive([clientFrame(opcode: 2, [0xFF, 0xED, 0xA0])[...]]).events == [.binary([0xFF, 0xED, 0xA0])])
    }

    // MARK: Limits

    @Test func oversizeFrameClosesWith1009BeforeThePayloadArrives() {
        let configuration = WebSocketConfiguration(maxFrameSize: 200, maxMessageSize: 1000)
        let header = Array(clientFrame(opcode: 2, [UInt8](repeating: 0, count: 201))[..<4])
        let outcome = receive([header[...]], configuration: configuration)
        #expect(outcome.events == [.closed(code: .messageTooBig, reason: "", initiatedByPeer: false)])
        #expect(outcome.outbound == serverFrame(opcode: 8, closePayload(1009)))
    }

    @Test func frameOfExactlyTheLimitIsAccepted() {
        let configuration = WebSocketConfiguration(maxFrameSize: 200, maxMessageSize: 200)
        let payload = [UInt8](repeating: 3, count: 200)
        #expect(receive([clientFrame(opcode: 2, payload)[...]], configuration: configuration).events == [.binary(payload)])
    }

    @Test func twoToThe63LengthClosesWith1002() {
        let header = rawFrame(opcode: 2, mask: testKey, declaredLength: 1 << 63)
        #expect(receive([header[...]]).events == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
    }

    @Test func oversizeMessageAcrossFragmentsClosesWith1009() {
        let configuration = WebSocketConfiguration(maxFrameSize: 200, maxMessageSize: 300)
        let chunk = [UInt8](repeating: 1, count: 150)
        let exact = clientFrame(fin: false, opcode: 2, chunk) + clientFrame(opcode: 0, chunk)
        #expect(receive([exact[...]], configuration: configuration).events == [.binary(chunk + chunk)])
        let over = clientFrame(fin: false, opcode: 2, chunk) + clientFrame(opcode: 0, chunk + [1])
        #expect(receive([over[...]], configuration: configuration).events
            == [.closed(code: .messageTooBig, reason: "", initiatedByPeer: false)])
    }

    @Test func tooManyFragmentsClosesWith1009() {
        let configuration = WebSocketConfiguration(maxFragmentsPerMessage: 2)
        let input = clientFrame(fin: false, opcode: 2, [1]) + clientFrame(fin: false, opcode: 0, [2])
            + clientFrame(opcode: 0, [3])
        #expect(receive([input[...]], configuration: configuration).events
            == [.closed(code: .messageTooBig, reason: "", initiatedByPeer: false)])
    }

    @Test func echoConfigurationAllowsLargeHeavilyFragmentedMessages() {
        #expect(WebSocketConfiguration.echo.maxMessageSize == 16 << 20)
        #expect(WebSocketConfiguration.echo.maxFragmentsPerMessage == 1 << 18)
        // Autobahn 9.3.1's shape: a first frame, then 65,536 continuations.
        var input: [UInt8] = clientFrame(fin: false, opcode: 2, [0])
        let continuation = clientFrame(fin: false, opcode: 0, [1])
        input.reserveCapacity(continuation.count * 65_537)
        for _ in 0..<65_535 { input += continuation }
        input += clientFrame(opcode: 0, [2])
        let outcome = receive([input[...]], configuration: .echo)
        #expect(outcome.events == [.binary([0] + [UInt8](repeating: 1, count: 65_535) + [2])])
    }

    @Test func randomInputNeverCrashesAndNeverDependsOnChunking() {
        var generator = SeededGenerator(seed: 99)
        let prefixes: [[UInt8]] = [[], clientFrame(fin: false, opcode: 1, Array("ab".utf8)), [0x81, 0x85]]
        for round in 0..<150 {
            let length = Int.random(in: 0...24, using: &generator)
            let noise = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let input = prefixes[round % prefixes.count] + noise
            let outcome = verifyDripFeed(input) {
                receive($0, configuration: WebSocketConfiguration(maxFrameSize: 1000, maxMessageSize: 1000),
                        deflate: round % 2 == 0 ? DeflateParameters() : nil)
            }
            // Whatever happened, a close event is always the last event.
            for (index, event) in outcome.events.enumerated() {
                if case .closed = event { #expect(index == outcome.events.count - 1) }
            }
        }
    }
}
