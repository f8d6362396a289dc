// One client connection, from the first byte of its HTTP request to its close.
//
// Theory of operation. A connection moves through three phases:
//
//   handshake ──upgrade──▶ webSocket ──close handshake / error / EOF──▶ closed
//     ▲   └──plain HTTP or rejection: answer, then close
//     └── or, for a plain answer on a persistent HTTP/1.1 connection, wait for the next request
//
// In the handshake phase bytes go to `HTTPRequestParser`; a complete head is routed: an
// upgrade on a WebSocket path gets the 101 and a `WebSocketStateMachine` (the sans-I/O state
// machine), anything else a plain HTTP response (the web app's files, health, metrics) and,
// unless both sides keep the connection, a graceful close. Bytes that arrived after the head
// (a client may pipeline its first frame, or its next request) go to whatever comes next.
//
// Time is the transport's single per-connection `deadline`, re-armed for whichever phase we
// are in: the handshake timeout; then, while open, "idle for `pingInterval`" → send a ping and
// wait `pongTimeout` for any input; while closing, how long we wait for the peer's close frame.
// Every read pushes the idle deadline back, so a busy connection is never pinged.
//
// The client. Per-address limits, logs and loopback checks use the connection's `ClientOrigin`:
// the TCP peer, or whom a trusted proxy's PROXY header names (read by the transport before
// anything else). When that is itself a trusted proxy, the request's `Forwarded` /
// `X-Forwarded-For` headers name the client, so the per-address admission (handshake rate,
// connections held) waits for the request head instead of running at open; a malformed header
// from a trusted proxy is 400. Such headers from anyone else are ignored, counted, and logged
// once per peer.
//
// Output: everything the state machine produces is handed to the transport as one array per
// call, without a copy. A client that stops reading is a slow consumer: once more than
// `maxOutputBytes` is still queued for it when the next message goes out, it is sent a 1008
// close (behind what is queued) and dropped if it still does not drain within the transport's
// linger time. One message larger than the limit is not by itself a reason to drop a client.
//
// Memory: an idle client holds only its own state. What every connection of the listener shares
// (the routes, the limits and timeouts, the counters, the log) is one `ClientConnectionContext`;
// what only the handshake needs (the request parser, the count of plain answers, whether a
// proxy's headers are awaited) is a `HandshakeState` freed at the upgrade; the WebSocket state
// machine is a value kept inline, not an object of its own; the client's origin is derived from
// the transport unless forwarding headers named someone else; and the output value the state
// machine writes into is the loop's (`WebSocketScratch`), empty between calls, since every
// connection of a loop runs on its queue one call at a time.
//
// Confinement: an instance is created by the transport on the connection's event loop and every
// method runs on that loop's serial queue (the transport guarantees it for callbacks; endpoints
// are called from those callbacks or from blocks they `execute` on the same loop).
import Forwarding
import SocketServer
import WebSocketProtocol

package struct ConnectionLimits: Sendable {
    package var handshakeTimeoutMilliseconds: Int64
    package var pingIntervalMilliseconds: Int64
    package var pongTimeoutMilliseconds: Int64
    package var closeTimeoutMilliseconds: Int64
    package var maxOutputBytes: Int
    package var addressLimiter: AddressLimiter
    package var forwarding: ForwardingPolicy
    /// Where refusals, timeouts and slow consumers are logged (nil: not logged, for tests).
    package var logger: (any EventLog)?

    package init(handshakeTimeoutMilliseconds: Int64, pingIntervalMilliseconds: Int64, pongTimeoutMilliseconds: Int64,
                 closeTimeoutMilliseconds: Int64 = 5_000, maxOutputBytes: Int, addressLimiter: AddressLimiter,
                 forwarding: ForwardingPolicy = ForwardingPolicy(trusted: TrustedProxies()), logger: (any EventLog)? = nil) {
        self.handshakeTimeoutMilliseconds = handshakeTimeoutMilliseconds
        self.pingIntervalMilliseconds = pingIntervalMilliseconds
        self.pongTimeoutMilliseconds = pongTimeoutMilliseconds
        self.closeTimeoutMilliseconds = closeTimeoutMilliseconds
        self.maxOutputBytes = maxOutputBytes
        self.addressLimiter = addressLimiter
        self.forwarding = forwarding
        self.logger = logger
    }
}

/// What every client connection of one listener shares, made once by the server: one reference
/// per connection instead of a copy of each part.
package final class ClientConnectionContext: Sendable {
    package let router: HTTPRouter
    package let limits: ConnectionLimits
    package let metrics: ConnectionMetrics
    /// The timing rules, taken from `limits` once.
    package let timing: ConnectionStateMachine.Limits

    package init(router: HTTPRouter, limits: ConnectionLimits, metrics: ConnectionMetrics) {
        self.router = router
        self.limits = limits
        self.metrics = metrics
        self.timing = ConnectionStateMachine.Limits(limits)
    }
}

/// The output value every client connection of a loop writes its state machine's output into:
/// each call leaves it empty (`ClientConnection.clearOutput`), so it keeps only its capacity, once
/// per loop. Confined to its loop's queue (`EventLoop.local`).
final class WebSocketScratch {
    static let key = LoopLocal { WebSocketScratch() }

    var output = WebSocketOutput()
}

package final class ClientConnection: ConnectionHandler, WebSocketChannel, @unchecked Sendable {
    enum Phase {
        case handshake(HandshakeState)
        /// The state machine is `socket`.
        case webSocket(WebSocketEndpoint)
        /// Upgraded on a route whose endpoint is made at the first message (`socket` is set).
        case awaitingFirstMessage(WebSocketRoute)
        case closed
    }

    /// What a connection needs until it upgrades (or closes): boxed, so an upgraded connection
    /// pays one word for it while it lasts and nothing after.
    final class HandshakeState {
        var parser = HTTPRequestParser()
        var plainRequestsServed = 0
        /// Admission waits for the request head, whose headers may name the client.
        var awaitsForwardingHeaders = false
        /// A trusted proxy's headers name the client per request, and a proxy may send requests of
        /// several clients over one connection: such a connection serves one request only.
        var isFromTrustedProxy = false
    }

    /// The client a trusted proxy's forwarding headers named, kept only when they did.
    private final class ForwardedOrigin {
        let origin: ClientOrigin
        init(_ origin: ClientOrigin) { self.origin = origin }
    }

    // Declared so that they pack: the small fields sit before the state machine's alignment.
    package let connection: Connection
    let context: ClientConnectionContext
    private var forwardedOrigin: ForwardedOrigin?
    var phase: Phase
    /// Pings, timeouts and the slow-consumer rule; sets `connection.deadline`.
    var timing = ConnectionStateMachine()
    private var holdsAddressSlot = false
    /// The WebSocket's state machine, from the upgrade to the close.
    var socket: WebSocketStateMachine?

    /// Requests one persistent connection may make before it is closed: far more than a page
    /// load needs, and a bound on what one connection can ask for.
    package static let maximumPlainRequestsPerConnection = 100

    package init(connection: Connection, context: ClientConnectionContext) {
        self.connection = connection
        self.context = context
        self.phase = .handshake(HandshakeState())
    }

    var limits: ConnectionLimits { context.limits }
    var metrics: ConnectionMetrics { context.metrics }
    var router: HTTPRouter { context.router }

    /// Whom the connection is for: the TCP peer or whom its PROXY header names, unless a trusted
    /// proxy's forwarding headers named the client. Settled before admission; admission counts
    /// its address and the close releases it.
    package var clientOrigin: ClientOrigin {
        if let forwardedOrigin { return forwardedOrigin.origin }
        return ClientOrigin(peer: connection.remoteAddress.ipAddress, proxyHeader: connection.proxyHeader,
                            connectionUsesTLS: connection.usesTLS)
    }

    /// The loop's output value; see `WebSocketScratch`. Fetched once per call into this
    /// connection and handed down.
    var scratch: WebSocketScratch { connection.loop.local(WebSocketScratch.key) }

    // MARK: ConnectionHandler

    package func connectionDidOpen(_ connection: Connection) {
        metrics.connectionsOpened.increment()
        if clientOrigin.trustsHeaders(limits.forwarding.trusted) {
            if case .handshake(let handshake) = phase {
                handshake.awaitsForwardingHeaders = true
                handshake.isFromTrustedProxy = true
            }
        } else if !admit() {
            return
        }
        timing.awaitRequest(now: connection.loop.now, afterAnswer: false, limits: context.timing)
        connection.deadline = timing.deadline
    }

    /// The per-address limits for `clientOrigin`; false (and a 429 on its way) when refused.
    private func admit() -> Bool {
        let clientOrigin = self.clientOrigin
        let address = clientOrigin.address
        guard limits.addressLimiter.admitHandshake(from: address, now: connection.loop.now) else {
            phase = .closed
            noteHandshakeFailure("handshake_rate")
            respondAndClose(.rejection(status: 429, reason: "too many handshakes from this address; slow down"), isHead: false)
            return false
        }
        guard limits.addressLimiter.acquire(address) else {
            phase = .closed
            noteHandshakeFailure("too_many_connections_from_address")
            respondAndClose(.rejection(status: 429, reason: "too many connections from this address"), isHead: false)
            return false
        }
        holdsAddressSlot = true
        metrics.clientAddressSources.increment(label: clientOrigin.source.rawValue)
        return true
    }

    /// Takes the client from the request's forwarding headers when they come from a trusted
    /// proxy, then admits it; notes them when they come from anyone else. False when the
    /// request was refused.
    func resolveClient(from head: HTTPRequestHead, _ handshake: HandshakeState) -> Bool {
        let headers = ForwardingPolicy.headers(of: head)
        guard handshake.awaitsForwardingHeaders else {
            if !headers.isEmpty { noteIgnoredForwardingHeaders() }
            return true
        }
        handshake.awaitsForwardingHeaders = false
        if !headers.isEmpty {
            do throws(ForwardedHeaderError) {
                forwardedOrigin = ForwardedOrigin(try clientOrigin.resolved(by: headers, trusting: limits.forwarding.trusted))
            } catch {
                noteHandshakeFailure("bad_forwarding_header")
                respondAndClose(.rejection(status: 400, reason: "malformed forwarding header: \(error.message)"), isHead: false)
                return false
            }
        }
        return admit()
    }

    private func noteIgnoredForwardingHeaders() {
        metrics.forwardingHeadersIgnored.increment()
        guard limits.forwarding.isFirstIgnoredHeader(from: clientOrigin.address) else { return }
        limits.logger?.warning("forwarding_headers_ignored", [
            "connection.id": connection.id, "remote": clientOrigin.description,
            "detail": "Forwarded/X-Forwarded-* from a peer that is not a --trusted-proxy; logged once per peer"])
    }

    package func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        metrics.bytesIn.add(bytes.count)
        switch phase {
        case .handshake:
            receiveRequests(bytes)
        case .webSocket, .awaitingFirstMessage:
            feed(bytes)
        case .closed:
            break
        }
    }

    package func connectionDidDrain(_ connection: Connection) {}

    package func connectionDeadlineReached(_ connection: Connection) {
        if case .closed = phase {
            connection.close(flushFirst: false)
            return
        }
        switch timing.deadlineReached(now: connection.loop.now, isOpen: socket?.isOpen ?? true, limits: context.timing) {
        case .closeIdle:
            phase = .closed
            connection.close(flushFirst: true)
        case .rejectSlowRequest:
            phase = .closed
            noteHandshakeFailure("timeout")
            respondAndClose(.rejection(status: 408, reason: "the request did not arrive in time"), isHead: false)
        case .endTimedOut(let reason):
            metrics.closes.increment(label: reason)
            limits.logger?.info("connection_timed_out", ["connection.id": connection.id, "reason": reason])
            if socket != nil {
                let scratch = self.scratch
                socket!.receiveEndOfInput(into: &scratch.output)
                flush(scratch)
            }
            connection.close(flushFirst: false)
        case .sendPing:
            guard socket != nil else { return }
            let scratch = self.scratch
            socket!.sendPing(into: &scratch.output)
            flush(scratch)
            connection.deadline = timing.deadline
        case .dropSlowConsumer:
            fatalError("internal inconsistency in ClientConnection: a deadline is never a slow consumer")
        }
    }

    package func connectionDidClose(_ connection: Connection, reason: ConnectionCloseReason) {
        metrics.connectionsClosed.increment()
        if holdsAddressSlot {
            holdsAddressSlot = false
            limits.addressLimiter.release(clientOrigin.address)
        }
        if case .proxyHeaderRefused(let refusal) = reason { noteProxyHeaderRefusal(refusal) }
        if case .outputLimitExceeded = reason { metrics.slowConsumerDisconnects.increment() }
        if case .tlsFailure(let failure) = reason, let label = Self.handshakeFailureLabel(failure) {
            noteHandshakeFailure(label, detail: failure.message)
        }
        if case .webSocket(let endpoint) = phase {
            phase = .closed
            if socket?.isClosed == false {
                let scratch = self.scratch
                socket!.receiveEndOfInput(into: &scratch.output)
                Self.clearOutput(scratch)
            }
            endpoint.webSocketDidClose(self)
        }
        phase = .closed
        socket = nil
    }

    // MARK: WebSocketChannel

    package var loop: EventLoop { connection.loop }
    package var connectionID: UInt64 { connection.id }

    /// What runs on the upgraded connection; nil before the upgrade and after the close.
    package var webSocketEndpoint: WebSocketEndpoint? {
        if case .webSocket(let endpoint) = phase { return endpoint }
        return nil
    }

    /// The permessage-deflate parameters agreed at the upgrade, or nil.
    private var negotiatedDeflate: DeflateParameters? { socket?.deflate ?? nil }

    package var isOpen: Bool {
        switch phase {
        case .webSocket, .awaitingFirstMessage: return socket?.isOpen == true && !timing.isSlowConsumer
        case .handshake, .closed: return false
        }
    }

    package func send(text bytes: [UInt8]) {
        guard isOpen else { return }
        metrics.messagesOut.increment()
        let scratch = self.scratch
        bytes.withUnsafeBytes { _ = socket!.send(textBytes: $0, into: &scratch.output) }
        flush(scratch)
    }

    package func send(binary bytes: [UInt8]) {
        guard isOpen else { return }
        metrics.messagesOut.increment()
        let scratch = self.scratch
        _ = socket!.send(binary: bytes, into: &scratch.output)
        flush(scratch)
    }

    package func send(shared message: SharedMessage) {
        guard isOpen else { return }
        metrics.messagesOut.increment()
        let frame = message.frame(for: negotiatedDeflate)
        metrics.bytesOut.add(frame.count)
        let backlog = connection.queuedByteCount
        connection.send(frame)
        checkSlowConsumer(backlog: backlog)
    }

    /// One gathered write from the batch's shared vectors when nothing is queued for this client.
    @discardableResult
    package func send(shared batch: SharedBatch) -> Bool {
        guard isOpen else { return false }
        metrics.messagesOut.add(batch.messages.count)
        let output = batch.output(for: negotiatedDeflate)
        metrics.bytesOut.add(output.byteCount)
        let backlog = connection.queuedByteCount
        connection.send(output)
        checkSlowConsumer(backlog: backlog)
        return true
    }

    package func cork() { connection.cork() }
    package func uncork() { connection.uncork() }

    package func close(code: CloseCode, reason: String) {
        switch phase {
        case .webSocket, .awaitingFirstMessage: break
        case .handshake, .closed: return
        }
        let scratch = self.scratch
        socket?.close(code: code, reason: reason, into: &scratch.output)
        flush(scratch)
    }
}
