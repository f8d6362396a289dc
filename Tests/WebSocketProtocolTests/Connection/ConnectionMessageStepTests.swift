import Testing
@testable import WebSocketProtocol

/// `receiveUntilMessage`: one data message per call, so a shell can answer each message before
/// a later frame in the same read fails the connection.
@Suite struct ConnectionMessageStepTests {
    /// Feeds `input` the way the server shell does: call after call, recording the events and
    /// outbound bytes each call produced.
    private func step(_ input: [UInt8], deflate: DeflateParameters? = nil) -> [(consumed: Int, outcome: ConnectionOutcome)] {
        let connection = WebSocketConnection(role: .server, deflate: deflate)
        var steps: [(consumed: Int, outcome: ConnectionOutcome)] = []
        var offset = 0
        input.withUnsafeBytes { bytes in
            repeat {
                var output = WebSocketOutput()
                let consumed = connection.receiveUntilMessage(UnsafeRawBufferPointer(rebasing: bytes[offset...]),
                                                              into: &output)
                offset += consumed
                steps.append((consumed, ConnectionOutcome(events: output.events, outbound: output.outbound,
                                                          closesTransport: output.shouldCloseTransport)))
            } while offset < bytes.count && !connection.isClosed && steps.count < 100
        }
        return steps
    }

    @Test func validMessageThenBadFrameComesOutInTwoSteps() {
        let first = clientFrame(opcode: 1, Array("hello".utf8))
        let input = first + clientFrame(rsv: 4, opcode: 1, Array("bad".utf8))
        let steps = step(input)
        #expect(steps.count == 2)
        #expect(steps[0].consumed == first.count)
        #expect(steps[0].outcome == ConnectionOutcome(events: [.text(Array("hello".utf8))], outbound: [],
                                                      closesTransport: false))
        #expect(steps[1].outcome == ConnectionOutcome(
            events: [.closed(code: .protocolError, reason: "", initiatedByPeer: false)],
            outbound: serverFrame(opcode: 8, closePayload(1002)), closesTransport: true))
    }

    @Test func fragmentsAndInterleavedPingsStopOnlyAtTheFinalFragment() {
        let message = clientFrame(fin: false, opcode: 1, Array("frag".utf8)) + clientFrame(opcode: 9, [7])
            + clientFrame(opcode: 0, Array("ment".utf8))
        let input = message + clientFrame(opcode: 2, [1, 2, 3])
        let steps = step(input)
        #expect(steps.map(\.consumed) == [message.count, input.count - message.count])
        #expect(steps[0].outcome.events == [.ping([7]), .text(Array("fragment".utf8))])
        #expect(steps[0].outcome.outbound == serverFrame(opcode: 10, [7]))
        #expect(steps[1].outcome.events == [.binary([1, 2, 3])])
    }

    @Test func inputWithoutAMessageEndIsConsumedWhole() {
        let input = clientFrame(opcode: 9, [1]) + Array(clientFrame(opcode: 1, Array("partial".utf8)).prefix(5))
        let steps = step(input)
        #expect(steps.map(\.consumed) == [input.count])
        #expect(steps[0].outcome.events == [.ping([1])])
    }

    @Test func closedConnectionConsumesEverything() {
        let input = clientFrame(opcode: 8, closePayload(1000)) + clientFrame(opcode: 1, Array("late".utf8))
        let steps = step(input)
        #expect(steps.map(\.consumed) == [input.count])
        #expect(steps[0].outcome.events == [.closed(code: .normalClosure, reason: "", initiatedByPeer: true)])
    }

    @Test func stepwiseOutcomeMatchesWholeReceive() {
        let input = clientFrame(opcode: 1, Array("a".utf8)) + clientFrame(opcode: 2, [9])
            + clientFrame(fin: false, opcode: 1, [0x68]) + clientFrame(opcode: 0, [0xC3, 0x28])
        let steps = step(input)
        let joined = steps.map(\.outcome).reduce(ConnectionOutcome(events: [], outbound: [], closesTransport: false)) {
            ConnectionOutcome(events: $0.events + $1.events, outbound: $0.outbound + $1.outbound,
                              closesTransport: $1.closesTransport)
        }
        #expect(joined == receive([input[...]]))
        #expect(joined.events.last == .closed(code: .invalidFramePayloadData, reason: "", initiatedByPeer: false))
    }
}
