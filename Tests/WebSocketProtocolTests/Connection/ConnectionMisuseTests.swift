import Testing
@testable import WebSocketProtocol

/// Caller misuse traps (`precondition`); these run in a child process.
@Suite struct ConnectionMisuseTests {
    @Test func sendingAReservedCloseCodeTraps() async {
        await #expect(processExitsWith: .failure) {
            let connection = WebSocketConnection(role: .server)
            var output = WebSocketOutput()
            connection.close(code: .noStatusReceived, into: &output)
        }
    }

    @Test func oversizedPingPayloadTraps() async {
        await #expect(processExitsWith: .failure) {
            let connection = WebSocketConnection(role: .server)
            var output = WebSocketOutput()
            connection.sendPing([UInt8](repeating: 0, count: 126), into: &output)
        }
    }

    @Test func clientSendingASharedServerFrameTraps() async {
        await #expect(processExitsWith: .failure) {
            let connection = WebSocketConnection(role: .client)
            var output = WebSocketOutput()
            connection.send(sharedFrame: [0x81, 0x00], into: &output)
        }
    }

    @Test func aClientMachineSendingWithoutMaskingKeysTraps() async {
        await #expect(processExitsWith: .failure) {
            var machine = WebSocketStateMachine(role: .client, sharing: WebSocketConfiguration.Shared(WebSocketConfiguration()))
            var output = WebSocketOutput()
            machine.send(text: "unmasked", into: &output)
        }
    }
}
