// ClientConnection's handshake phase: request heads parsed and routed, plain answers (kept alive
// when both sides allow it), the upgrade to a WebSocket, and the refusals counted and logged.
import Forwarding
import SocketServer
import WebSocketProtocol

extension ClientConnection {

    // MARK: Handshake

    /// Parses request heads until one upgrades, the connection closes, or the bytes run out.
    /// Plain requests on a persistent connection may be pipelined: each is answered in turn.
    func receiveRequests(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes
        while case .handshake(let handshake) = phase {
            do {
                switch try handshake.parser.parse(rest) {
                case .needsMoreData:
                    return
                case .complete(let head, let consumed):
                    phase = .closed
                    rest = UnsafeRawBufferPointer(rebasing: rest[consumed...])
                    route(head, handshake, leftover: rest)
                    guard case .handshake = phase, !rest.isEmpty else { return }
                }
            } catch {
                phase = .closed
                noteHandshakeFailure("status_\(error.status)")
                respondAndClose(error.response, isHead: false)
                return
            }
        }
    }

    private func route(_ head: HTTPRequestHead, _ handshake: HandshakeState, leftover: UnsafeRawBufferPointer) {
        guard resolveClient(from: head, handshake) else { return }
        guard let route = router.webSocketRoutes[String(head.path)] else {
            if case .reject(let response) = ServerHandshake.evaluate(head, configuration: router.handshake),
               head.headers.containsToken("websocket", named: "Upgrade") {
                noteHandshakeFailure("status_\(response.status)")
            }
            respondPlain(router.plainResponse(for: head), to: head, handshake)
            return
        }
        switch ServerHandshake.evaluate(head, configuration: router.handshake) {
        case .upgrade(let upgrade):
            if let refusal = route.refusal() {
                noteHandshakeFailure("status_\(refusal.status)")
                respondAndClose(refusal, isHead: false)
                return
            }
            connection.send(upgrade.responseBytes)
            socket = WebSocketStateMachine(role: .server, sharing: route.configuration, deflate: upgrade.deflate)
            metrics.webSocketsOpened.increment()
            timing.upgraded(now: connection.loop.now, limits: context.timing)
            connection.deadline = timing.deadline
            if route.opensEndpointAtFirstMessage {
                phase = .awaitingFirstMessage(route)
            } else {
                openEndpoint(of: route)
            }
            if !leftover.isEmpty { feed(leftover) }
        case .reject(let response):
            noteHandshakeFailure("status_\(response.status)")
            respondAndClose(response, isHead: false)
        case .notWebSocket:
            respondPlain(router.plainResponse(for: head), to: head, handshake)
        }
    }

    /// Answers a plain request, keeping the connection for the next request when both sides
    /// allow it (HTTP/1.1, no `Connection: close` on either, fewer than the cap served, not a
    /// proxy's), so a browser loading the web app's modules does not pay a TCP handshake per file.
    private func respondPlain(_ response: HTTPResponse, to head: HTTPRequestHead, _ handshake: HandshakeState) {
        handshake.plainRequestsServed += 1
        let keepsAlive = head.version == .http1_1
            && !head.headers.containsToken("close", named: "Connection")
            && !response.headers.containsToken("close", named: "Connection")
            && handshake.plainRequestsServed < Self.maximumPlainRequestsPerConnection
            && !handshake.isFromTrustedProxy
        guard keepsAlive else {
            var closing = response
            closing.headers.replaceOrAppend(name: "Connection", value: "close")
            respondAndClose(closing, isHead: head.method == "HEAD")
            return
        }
        connection.send(response.serialized(includingBody: head.method != "HEAD"))
        handshake.parser = HTTPRequestParser()
        phase = .handshake(handshake)
        timing.awaitRequest(now: connection.loop.now, afterAnswer: true, limits: context.timing)
        connection.deadline = timing.deadline
    }

    func respondAndClose(_ response: HTTPResponse, isHead: Bool) {
        connection.send(response.serialized(includingBody: !isHead))
        connection.close(flushFirst: true)
    }

    func noteHandshakeFailure(_ reason: String, detail: String? = nil) {
        metrics.handshakeFailures.increment(label: reason)
        let peer = connection.remoteAddress.description
        if let detail {
            limits.logger?.info("handshake_refused", ["connection.id": connection.id, "remote": clientOrigin.description,
                                                      "peer": peer, "reason": reason, "detail": detail])
        } else {
            limits.logger?.info("handshake_refused", ["connection.id": connection.id, "remote": clientOrigin.description,
                                                      "peer": peer, "reason": reason])
        }
    }

    func noteProxyHeaderRefusal(_ refusal: ProxyHeaderRefusal) {
        let reason = switch refusal {
        case .untrustedPeer: "proxy_untrusted_peer"
        case .invalid: "proxy_header_invalid"
        case .timedOut: "proxy_header_timeout"
        }
        metrics.handshakeFailures.increment(label: reason)
        limits.logger?.info("handshake_refused", ["connection.id": connection.id, "peer": connection.remoteAddress.description,
                                                  "reason": reason, "detail": refusal.description])
    }

    /// The `reason` label of a TLS failure that ended the connection before it opened; nil for
    /// a record failure on an open connection, which is no handshake failure.
    package static func handshakeFailureLabel(_ failure: TLSFailure) -> String? {
        switch failure.kind {
        case .unsupportedVersion: "tls_protocol_version"
        case .handshake: "tls_handshake"
        case .timeout: "tls_timeout"
        case .record: nil
        }
    }
}
