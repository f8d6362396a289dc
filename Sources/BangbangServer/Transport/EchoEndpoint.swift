// `/echo`: sends every message back as it came (text as text, binary as binary). It is how
// conformance suites and monitoring test a WebSocket server; off unless `--echo` is given.
final class EchoEndpoint: WebSocketEndpoint {
    func webSocketDidOpen(_ channel: WebSocketChannel) {}
    func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) { channel.send(text: bytes) }
    func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) { channel.send(binary: bytes) }
    func webSocketDidClose(_ channel: WebSocketChannel) {}
}
