// `/echo`: sends every message back as it came (text as text, binary as binary). It is how
// conformance suites and monitoring test a WebSocket server; off unless `--echo` is given.
package final class EchoEndpoint: WebSocketEndpoint {
    package init() {}
    package func webSocketDidOpen(_ channel: WebSocketChannel) {}
    package func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) { channel.send(text: bytes) }
    package func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) { channel.send(binary: bytes) }
    package func webSocketDidClose(_ channel: WebSocketChannel) {}
}
