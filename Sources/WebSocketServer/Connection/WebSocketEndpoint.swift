// What runs on top of an upgraded connection. The transport glue (`ClientConnection`) owns the
// socket, the HTTP handshake, the WebSocket state machine, pings and timeouts; an endpoint sees
// only whole messages and answers through the `WebSocketChannel` it is given. Both are confined
// to the connection's event-loop queue: every call below happens there.
import Forwarding
import SocketServer
import WebSocketProtocol
import Synchronization

package protocol WebSocketEndpoint: AnyObject {
    func webSocketDidOpen(_ channel: WebSocketChannel)
    func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8])
    func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8])
    /// The connection is over (whatever closed it); no call follows.
    func webSocketDidClose(_ channel: WebSocketChannel)
}

/// How an endpoint talks back. Implemented by `ClientConnection`, and by the server's cluster
/// relay for a client whose WebSocket another node terminates.
package protocol WebSocketChannel: AnyObject {
    /// The loop the channel and its endpoint are confined to.
    var loop: EventLoop { get }
    /// The connection's id for log lines.
    var connectionID: UInt64 { get }
    /// The client behind the connection, through any trusted proxies: what per-address limits,
    /// logs and loopback-only checks use.
    var clientOrigin: ClientOrigin { get }
    var isOpen: Bool { get }
    func send(text bytes: [UInt8])
    func send(binary bytes: [UInt8])
    /// Sends a frame made once for many recipients (see `SharedMessage`).
    func send(shared message: SharedMessage)
    /// Sends messages shared by many recipients, in order, together (see `SharedBatch`);
    /// false when the channel is no longer open and nothing was sent.
    @discardableResult
    func send(shared batch: SharedBatch) -> Bool
    /// Between `cork()` and `uncork()` sends only queue; `uncork` writes them together.
    func cork()
    func uncork()
    func close(code: CloseCode, reason: String)
}

extension WebSocketChannel {
    /// Each message in turn, corked so they leave together.
    @discardableResult
    package func send(shared batch: SharedBatch) -> Bool {
        guard isOpen else { return false }
        cork()
        for message in batch.messages { send(shared: message) }
        uncork()
        return true
    }
}

/// A server message framed once — uncompressed, and compressed when some recipient negotiated
/// permessage-deflate — so a broadcast costs one encode and at most two frames, whatever the
/// number of recipients. Each connection picks the variant it can read.
package final class SharedMessage: Sendable {
    package let plainFrame: [UInt8]
    /// The message itself, unframed (what a relay forwards to another node).
    package let payload: [UInt8]
    private let compressed: Mutex<[Int: [UInt8]]>

    package init(text payload: [UInt8]) {
        self.payload = payload
        self.plainFrame = FrameEncoder.makeServerFrame(opcode: .text, payload: payload, compressedWith: nil)
        self.compressed = Mutex([:])
    }

    /// Messages shorter than this are sent uncompressed even to deflate connections: the
    /// frame would barely shrink and compressing costs more than it saves.
    package static let compressionThreshold = 256

    /// The frame for a connection with these negotiated parameters, compressed at most once per
    /// window size.
    package func frame(for deflate: DeflateParameters?) -> [UInt8] {
        guard let deflate, payload.count >= Self.compressionThreshold else { return plainFrame }
        let windowBits = deflate.serverMaxWindowBits
        return compressed.withLock { cache in
            if let frame = cache[windowBits] { return frame }
            let frame = FrameEncoder.makeServerFrame(opcode: .text, payload: payload,
                                                     compressedWith: DeflateParameters(serverNoContextTakeover: true,
                                                                                       serverMaxWindowBits: windowBits))
            cache[windowBits] = frame
            return frame
        }
    }
}
