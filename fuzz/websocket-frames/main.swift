// Fuzz target: the WebSocket connection state machine (frame decoder, masking, UTF-8
// validation, fragmentation, permessage-deflate, close handshake), either role.
//
// Input layout: byte 0 chooses the setup —
//   bit 0      role: 0 server (expects masked frames), 1 client (expects unmasked ones)
//   bits 1–2   permessage-deflate: none, context takeover, no context takeover, 9-bit windows
//   bit 3      tight limits (frames ≤ 256 B, messages ≤ 1 KiB, 4 fragments) or the defaults
//   bits 4–7   chunk size the rest is fed in: 1 << (n % 12) bytes, so 1 … 2048
// and bytes 1... are what the peer sent. Every data message received is echoed back, and
// every fourth chunk we also ping, so the send paths run too.
//
// Invariants checked, beyond "no crash and no sanitizer report":
//   - exactly one `.closed` event ever, and nothing after it, even when more input arrives;
//   - `.closed` is reported together with `shouldCloseTransport`, and `isClosed` agrees;
//   - text events are valid UTF-8 (checked with the standard library's decoder, not ours);
//   - no message exceeds `maxMessageSize`, no ping/pong payload exceeds 125 bytes;
//   - everything we wrote, fed to a fresh connection of the other role with the same deflate
//     parameters, decodes without a protocol violation and yields exactly the messages we echoed.
//
// Masking keys come from a fixed seed, so a crash reproduces from its input alone; the generator
// is the tests' one (Tests/TestSupport/SeededGenerator.swift), which scripts/fuzz.sh compiles in.
import WebSocketProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private let tightLimits = WebSocketConfiguration(maxFrameSize: 256, maxMessageSize: 1024, maxFragmentsPerMessage: 4)

private func deflateParameters(_ choice: UInt8) -> DeflateParameters? {
    switch choice & 3 {
    case 0: nil
    case 1: DeflateParameters()
    case 2: DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true)
    default: DeflateParameters(serverMaxWindowBits: 9, clientMaxWindowBits: 9)
    }
}

private enum Sent: Equatable {
    case text([UInt8])
    case binary([UInt8])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let setup = data[0]
    let role: Role = setup & 1 == 0 ? .server : .client
    let deflate = deflateParameters(setup >> 1)
    let configuration = setup & 8 == 0 ? WebSocketConfiguration() : tightLimits
    let chunkSize = 1 << (Int(setup >> 4) % 12)
    let input = UnsafeRawBufferPointer(start: data + 1, count: size - 1)

    let connection = WebSocketConnection(role: role, configuration: configuration, deflate: deflate,
                                         maskingKeyGenerator: SeededGenerator(seed: 1))
    var output = WebSocketOutput()
    var written: [UInt8] = []
    var echoed: [Sent] = []
    var sawClosed = false

    func check(_ output: WebSocketOutput) {
        for (index, event) in output.events.enumerated() {
            require(!sawClosed, "event \(event) after .closed")
            switch event {
            case .text(let bytes):
                require(String(validating: bytes, as: UTF8.self) != nil, "text event is not valid UTF-8")
                require(bytes.count <= configuration.maxMessageSize, "text message over the limit")
            case .binary(let bytes):
                require(bytes.count <= configuration.maxMessageSize, "binary message over the limit")
            case .ping(let bytes), .pong(let bytes):
                require(bytes.count <= 125, "control payload over 125 bytes")
            case .closed:
                require(index == output.events.count - 1, ".closed is not the last event of its call")
                require(output.shouldCloseTransport, ".closed without shouldCloseTransport")
                require(connection.isClosed && !connection.isOpen, ".closed but the connection is not closed")
                sawClosed = true
            }
        }
    }

    var offset = 0
    var chunkCount = 0
    while offset < input.count {
        let end = min(offset + chunkSize, input.count)
        connection.receive(UnsafeRawBufferPointer(rebasing: input[offset..<end]), into: &output)
        offset = end
        chunkCount += 1
        check(output)
        for event in output.events {
            switch event {
            case .text(let bytes):
                if bytes.withUnsafeBytes({ connection.send(textBytes: $0, into: &output) }) { echoed.append(.text(bytes)) }
            case .binary(let bytes):
                if connection.send(binary: bytes, into: &output) { echoed.append(.binary(bytes)) }
            default:
                break
            }
        }
        if chunkCount % 4 == 0 { connection.sendPing([UInt8(truncatingIfNeeded: chunkCount)], into: &output) }
        if sawClosed {
            require(!connection.sendPing(into: &output), "ping accepted after close")
        }
        written += output.outbound
        output.removeAll()
    }
    connection.receiveEndOfInput(into: &output)
    check(output)
    require(sawClosed, "end of input did not close the connection")
    written += output.outbound
    output.removeAll()
    // Input after the end changes nothing.
    connection.receive([0x81, 0x80, 0, 0, 0, 0], into: &output)
    require(output.events.isEmpty && output.outbound.isEmpty, "a closed connection reacted to input")

    replayToPeer(written, role: role, deflate: deflate, expecting: echoed)
    return 0
}

/// Feeds what we wrote to the other end and checks it reads back exactly what we sent.
private func replayToPeer(_ bytes: [UInt8], role: Role, deflate: DeflateParameters?, expecting sent: [Sent]) {
    let peer = WebSocketConnection(role: role == .server ? .client : .server,
                                   configuration: WebSocketConfiguration(maxFrameSize: 1 << 22, maxMessageSize: 1 << 22),
                                   deflate: deflate, maskingKeyGenerator: SeededGenerator(seed: 2))
    var output = WebSocketOutput()
    peer.receive(bytes, into: &output)
    require(peer.violation == nil, "our own output is a protocol violation for the peer: \(peer.violation!)")
    var received: [Sent] = []
    for event in output.events {
        switch event {
        case .text(let bytes): received.append(.text(bytes))
        case .binary(let bytes): received.append(.binary(bytes))
        default: break
        }
    }
    require(received == sent, "the peer read \(received.count) messages back, we sent \(sent.count)")
}
