import TestSupport
@testable import WebSocketProtocol

/// Everything one side produced, for comparisons that must not depend on input chunking.
struct ConnectionOutcome: DripFeedOutcome {
    var events: [WebSocketEvent]
    var outbound: [UInt8]
    var closesTransport: Bool

    /// Once the connection is over it ignores everything; until then, a second complete input
    /// simply adds its events and bytes.
    static func sequence(_ first: ConnectionOutcome, _ second: ConnectionOutcome) -> ConnectionOutcome {
        if first.closesTransport { return first }
        return ConnectionOutcome(events: first.events + second.events, outbound: first.outbound + second.outbound,
                                 closesTransport: second.closesTransport)
    }
}

/// Feeds `chunks` to a fresh connection (a fresh seeded generator, so client output is
/// deterministic) and reports what came out.
func receive(_ chunks: [ArraySlice<UInt8>], role: Role = .server,
             configuration: WebSocketConfiguration = WebSocketConfiguration(),
             deflate: DeflateParameters? = nil,
             prepare: (WebSocketConnection, inout WebSocketOutput) -> Void = { _, _ in }) -> ConnectionOutcome {
    let connection = WebSocketConnection(role: role, configuration: configuration, deflate: deflate,
                                         maskingKeyGenerator: SeededGenerator())
    var output = WebSocketOutput()
    prepare(connection, &output)
    for chunk in chunks {
        chunk.withUnsafeBytes { connection.receive($0, into: &output) }
    }
    return ConnectionOutcome(events: output.events, outbound: output.outbound,
                             closesTransport: output.shouldCloseTransport)
}

/// Server-side frames as a client sends them: masked.
func clientFrame(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
    rawFrame(fin: fin, rsv: rsv, opcode: opcode, payload: payload, mask: testKey)
}

func closePayload(_ code: UInt16, _ reason: String = "") -> [UInt8] {
    [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
}

/// A server frame as we expect our server to write it (unmasked).
func serverFrame(opcode: UInt8, _ payload: [UInt8] = []) -> [UInt8] {
    rawFrame(opcode: opcode, payload: payload)
}

/// A client and a server wired back to back; `pump()` moves bytes until both are quiet.
final class ConnectionPair {
    let client: WebSocketConnection
    let server: WebSocketConnection
    var clientOutput = WebSocketOutput()
    var serverOutput = WebSocketOutput()
    var clientEvents: [WebSocketEvent] = []
    var serverEvents: [WebSocketEvent] = []
    /// Every byte that crossed the wire in each direction, for inspection.
    var clientToServerBytes: [UInt8] = []
    var serverToClientBytes: [UInt8] = []

    init(configuration: WebSocketConfiguration = WebSocketConfiguration(), deflate: DeflateParameters? = nil) {
        client = WebSocketConnection(role: .client, configuration: configuration, deflate: deflate,
                                     maskingKeyGenerator: SeededGenerator(seed: 1))
        server = WebSocketConnection(role: .server, configuration: configuration, deflate: deflate)
    }

    /// Delivers pending bytes both ways, in pieces of `chunkSize`, until nothing is pending.
    func pump(chunkSize: Int = .max) {
        while !clientOutput.outbound.isEmpty || !serverOutput.outbound.isEmpty
            || !clientOutput.events.isEmpty || !serverOutput.events.isEmpty {
            clientEvents += clientOutput.events
            serverEvents += serverOutput.events
            let toServer = clientOutput.takeOutbound()
            let toClient = serverOutput.takeOutbound()
            clientOutput.events.removeAll()
            serverOutput.events.removeAll()
            clientToServerBytes += toServer
            serverToClientBytes += toClient
            deliver(toServer, to: server, output: &serverOutput, chunkSize: chunkSize)
            deliver(toClient, to: client, output: &clientOutput, chunkSize: chunkSize)
        }
    }

    private func deliver(_ bytes: [UInt8], to connection: WebSocketConnection, output: inout WebSocketOutput,
                         chunkSize: Int) {
        var start = 0
        while start < bytes.count {
            let end = start + min(chunkSize, bytes.count - start)
            bytes[start..<end].withUnsafeBytes { connection.receive($0, into: &output) }
            start = end
        }
    }
}
