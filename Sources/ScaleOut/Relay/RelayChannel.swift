// The owner's side of one relayed client: a `WebSocketChannel` whose socket is on another node.
// The `ClientSession` attached to it runs exactly as for a local client (same loop registry,
// same outbox, same limits); what it sends goes into its loop's `RelayOutbox`, which batches it
// for the gateway once per loop turn.
//
// Confinement: created by `RelayHost` and from then on used only on `loop`'s queue.
import BangbangApplication
import Forwarding
import PartitionOwner
import SocketServer
import WebSocketProtocol
import WebSocketServer

package final class RelayChannel: WebSocketChannel, @unchecked Sendable {
    package let loop: EventLoop
    /// The gateway's id for this connection (unique for the gateway's incarnation).
    package let connectionID: UInt64
    let gateway: RelayNode
    package let clientOrigin: ClientOrigin
    private let outbox: RelayOutbox
    /// Held here until the close; the session holds the channel until then too, and the host
    /// holds the channel.
    private(set) var session: ClientSession?
    package private(set) var isOpen = true
    /// `webSocketDidClose` was called; nothing more reaches the session.
    private(set) var isFinished = false
    /// Tells the host the connection is over (any thread).
    private let didFinish: @Sendable (RelayChannel) -> Void

    init(connectionID: UInt64, gateway: RelayNode, clientOrigin: ClientOrigin, session: ClientSession, outbox: RelayOutbox,
         didFinish: @escaping @Sendable (RelayChannel) -> Void) {
        self.loop = outbox.loop
        self.connectionID = connectionID
        self.gateway = gateway
        self.clientOrigin = clientOrigin
        self.session = session
        self.outbox = outbox
        self.didFinish = didFinish
    }

    func open() {
        session?.webSocketDidOpen(self)
    }

    package func receive(text bytes: [UInt8]) {
        guard isOpen, let session else { return }
        session.webSocket(self, didReceiveText: bytes)
    }

    /// Ends the connection for the session; `notifying` also tells the gateway to close the
    /// client with that code (nil: the gateway closed it, or is gone).
    package func finish(notifying close: (code: CloseCode, reason: String)?) {
        guard !isFinished else { return }
        if isOpen, let close { outbox.closeConnection(connectionID, of: gateway, code: close.code, reason: close.reason) }
        isOpen = false
        isFinished = true
        session?.webSocketDidClose(self)
        session = nil
        didFinish(self)
    }

    // MARK: WebSocketChannel

    package func send(text bytes: [UInt8]) {
        guard isOpen else { return }
        outbox.deliver(bytes, to: connectionID, of: gateway)
    }

    /// The session never sends binary; the relay carries text only.
    package func send(binary bytes: [UInt8]) {}

    package func send(shared message: SharedMessage) {
        guard isOpen else { return }
        outbox.deliver(message, to: connectionID, of: gateway)
    }

    /// The outbox already sends everything of one loop turn together.
    package func cork() {}
    package func uncork() {}

    /// The session closes the client (a flood, a binary message): the close goes behind what
    /// was sent; the session hears `webSocketDidClose` on a later turn, never inside its call.
    package func close(code: CloseCode, reason: String) {
        guard isOpen else { return }
        outbox.closeConnection(connectionID, of: gateway, code: code, reason: reason)
        isOpen = false
        loop.execute { self.finish(notifying: nil) }
    }
}
