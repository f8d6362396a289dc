import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct ConnectionCloseTests {
    @Test func peerCloseIsEchoedReportedAndEndsTheConnection() {
        let input = clientFrame(opcode: 8, closePayload(1001, "bye"))
        let outcome = verifyDripFeed(input, followedBy: clientFrame(opcode: 1, Array("late".utf8))) { receive($0) }
        #expect(outcome == ConnectionOutcome(
            events: [.closed(code: .goingAway, reason: "bye", initiatedByPeer: true)],
            outbound: serverFrame(opcode: 8, closePayload(1001)), closesTransport: true))
    }

    @Test func emptyPeerCloseIsEchoedEmptyAndReportedAs1005() {
        let outcome = receive([clientFrame(opcode: 8)[...]])
        #expect(outcome == ConnectionOutcome(
            events: [.closed(code: .noStatusReceived, reason: "", initiatedByPeer: true)],
            outbound: serverFrame(opcode: 8), closesTransport: true))
    }

    @Test(arguments: [UInt16(0), 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000])
    func closeWithAnInvalidCodeFailsWith1002(code: UInt16) {
        let outcome = receive([clientFrame(opcode: 8, closePayload(code))[...]])
        #expect(outcome.events == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
        #expect(outcome.outbound == serverFrame(opcode: 8, closePayload(1002)))
    }

    @Test(arguments: [UInt16(1000), 1003, 1007, 1011, 1012, 1014, 3000, 4999])
    func closeWithAValidCodeIsEchoed(code: UInt16) {
        let outcome = receive([clientFrame(opcode: 8, closePayload(code))[...]])
        #expect(outcome.events == [.closed(code: CloseCode(rawValue: code), reason: "", initiatedByPeer: true)])
        #expect(outcome.outbound == serverFrame(opcode: 8, closePayload(code)))
    }

    @Test func oneByteClosePayloadFailsWith1002() {
        #expect(receive([clientFrame(opcode: 8, [0x03])[...]]).events
            == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
    }

    @Test func closeReasonWithInvalidUTF8FailsWith1007() {
        let outcome = receive([clientFrame(opcode: 8, closePayload(1000) + [0xC0, 0x80])[...]])
        #expect(outcome.events == [.closed(code: .invalidFramePayloadData, reason: "", initiatedByPeer: false)])
        #expect(outcome.outbound == serverFrame(opcode: 8, closePayload(1007)))
    }

    @Test func afterOurCloseDataAndPingsAreIgnoredUntilThePeerAnswers() {
        let input = clientFrame(opcode: 1, Array("ignored".utf8)) + clientFrame(opcode: 9, [1])
            + clientFrame(opcode: 8, closePayload(1000)) + clientFrame(opcode: 1, Array("after".utf8))
        let outcome = verifyDripFeed(input) { chunks in
            receive(chunks, prepare: { connection, output in
                connection.close(code: .goingAway, reason: "restart", into: &output)
                #expect(!connection.isOpen && !connection.isClosed)
                #expect(!connection.send(text: "no", into: &output))
                #expect(!connection.sendPing(into: &output))
            })
        }
        #expect(outcome == ConnectionOutcome(
            events: [.closed(code: .goingAway, reason: "restart", initiatedByPeer: false)],
            outbound: serverFrame(opcode: 8, closePayload(1001, "restart")), closesTransport: true))
    }

    @Test func protocolErrorAfterOurCloseEndsWithoutASecondCloseFrame() {
        let outcome = receive([clientFrame(opcode: 3)[...]], prepare: { connection, output in
            connection.close(into: &output)
        })
        #expect(outcome.outbound == serverFrame(opcode: 8, closePayload(1000)))
        #expect(outcome.events == [.closed(code: .protocolError, reason: "", initiatedByPeer: false)])
    }

    @Test func endOfInputIsAnAbnormalClosure() {
        let connection = WebSocketConnection(role: .server)
        var output = WebSocketOutput()
        connection.receive(clientFrame(fin: false, opcode: 1, Array("half".utf8)), into: &output)
        connection.receiveEndOfInput(into: &output)
        #expect(output.events == [.closed(code: .abnormalClosure, reason: "", initiatedByPeer: true)])
        #expect(output.outbound.isEmpty && output.shouldCloseTransport)
        output.removeAll()
        connection.receiveEndOfInput(into: &output)
        #expect(output.events.isEmpty)
    }

    @Test func endOfInputAfterOurCloseIsReportedAsOurs() {
        let connection = WebSocketConnection(role: .server)
        var output = WebSocketOutput()
        connection.close(code: .normalClosure, into: &output)
        connection.receiveEndOfInput(into: &output)
        #expect(output.events == [.closed(code: .abnormalClosure, reason: "", initiatedByPeer: false)])
    }

    @Test func closingTwiceSendsOneCloseFrame() {
        let connection = WebSocketConnection(role: .server)
        var output = WebSocketOutput()
        connection.close(into: &output)
        connection.close(code: .goingAway, into: &output)
        #expect(output.outbound == serverFrame(opcode: 8, closePayload(1000)))
    }
}
