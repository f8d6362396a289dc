// ClientConnection's WebSocket phase: input fed to the state machine, its output handed to the
// transport, its events to the endpoint, and the slow-consumer rule.
import SocketServer
import WebSocketProtocol

extension ClientConnection {
    // MARK: WebSocket

    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard socket != nil else { fatalError("internal inconsistency in ClientConnection: WebSocket input without a state machine") }
        timing.bytesArrived(now: connection.loop.now, isOpen: socket!.isOpen, limits: context.timing)
        connection.deadline = timing.deadline
        let scratch = self.scratch
        // One message at a time, so the endpoint's answer to a message is written before any
        // later frame in the same read can fail the connection (strict in-order processing).
        var offset = 0
        repeat {
            offset += socket!.receiveUntilMessage(UnsafeRawBufferPointer(rebasing: bytes[offset...]), into: &scratch.output)
            deliver(scratch)
        } while offset < bytes.count && socket?.isClosed == false
    }

    /// Writes what the state machine produced, then hands its events to the endpoint in order.
    private func deliver(_ scratch: WebSocketScratch) {
        // Taken out (not copied), so the endpoint's own sends, on this connection or another of
        // the loop, find the loop's output empty; handed back afterwards with its capacity.
        var events: [WebSocketEvent] = []
        swap(&events, &scratch.output.events)
        defer {
            events.removeAll(keepingCapacity: true)
            if scratch.output.events.isEmpty { swap(&events, &scratch.output.events) }
        }
        flush(scratch)
        for event in events {
            switch event {
            case .text(let bytes):
                metrics.messagesIn.increment()
                endpointForMessage()?.webSocket(self, didReceiveText: bytes)
            case .binary(let bytes):
                metrics.messagesIn.increment()
                endpointForMessage()?.webSocket(self, didReceiveBinary: bytes)
            case .ping, .pong:
                break
            case .closed(let code, _, let initiatedByPeer):
                metrics.closes.increment(label: initiatedByPeer ? "peer_\(code.rawValue)" : "server_\(code.rawValue)")
            }
        }
    }

    /// Makes the route's endpoint and tells it the connection is open.
    func openEndpoint(of route: WebSocketRoute) {
        let endpoint = route.makeEndpoint(connection.loop)
        phase = .webSocket(endpoint)
        endpoint.webSocketDidOpen(self)
    }

    /// The endpoint a message goes to, made now on a route that waits for the first message;
    /// nil once the connection is closed.
    private func endpointForMessage() -> WebSocketEndpoint? {
        switch phase {
        case .webSocket(let endpoint):
            return endpoint
        case .awaitingFirstMessage(let route):
            openEndpoint(of: route)
            return webSocketEndpoint
        case .handshake, .closed:
            return nil
        }
    }

    /// Hands pending output to the transport, leaving the loop's output empty; closes the
    /// transport when the state machine says so.
    func flush(_ scratch: WebSocketScratch) {
        let backlog = connection.queuedByteCount
        if !scratch.output.outbound.isEmpty {
            let bytes = scratch.output.takeOutbound()
            metrics.bytesOut.add(bytes.count)
            connection.send(bytes)
        }
        let shouldClose = scratch.output.shouldCloseTransport
        Self.clearOutput(scratch)
        if shouldClose {
            connection.close(flushFirst: true)
        } else if socket?.isOpen == false, socket?.isClosed == false {
            timing.closingStarted(now: connection.loop.now, limits: context.timing)
            connection.deadline = timing.deadline
        }
        checkSlowConsumer(backlog: backlog, scratch)
    }

    /// Empties the loop's output for the next call, whichever connection makes it: its arrays
    /// keep their capacity, and the close request, sticky for one connection, is not carried
    /// over to another.
    static func clearOutput(_ scratch: WebSocketScratch) {
        scratch.output.removeAll()
        scratch.output.shouldCloseTransport = false
    }

    /// `backlog` is what was queued before the latest send: a peer is slow when earlier output
    /// is still waiting past the limit, not because one message (a 16 MiB echo) is larger than it.
    func checkSlowConsumer(backlog: Int, _ scratch: WebSocketScratch? = nil) {
        guard timing.outputQueued(backlog: backlog, limits: context.timing) == .dropSlowConsumer else { return }
        metrics.slowConsumerDisconnects.increment()
        limits.logger?.warning("slow_consumer_closed", ["connection.id": connection.id,
                                                        "remote": clientOrigin.description,
                                                        "queued_bytes": connection.queuedByteCount])
        let scratch = scratch ?? self.scratch
        socket?.close(code: .policyViolation, reason: "too slow: output buffer full", into: &scratch.output)
        let bytes = scratch.output.takeOutbound()
        Self.clearOutput(scratch)
        connection.send(bytes)
        connection.close(flushFirst: true)
    }
}
