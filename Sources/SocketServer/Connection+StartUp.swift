// Connection's start-up: registration with the loop, the PROXY header or TLS handshake that comes
// first, and a client's non-blocking connect.
import Forwarding
import Platform

extension Connection {
    // MARK: Start-up

    /// Registers the connection and starts reading; with `proxyProtocol`, a PROXY header from one
    /// of those peers comes first. Runs on the loop.
    func start(proxyProtocol: TrustedProxies? = nil) {
        loop.register(self)
        if let proxyProtocol {
            guard proxyProtocol.contains(remoteAddress.ipAddress) else {
                tearDown(.proxyHeaderRefused(.untrustedPeer))
                return
            }
            state = .awaitingProxyHeader
            proxyHeaderState = .reading(ProxyHeaderParser())
            layers?.openingDeadline = loop.now + options.proxyHeaderTimeoutMilliseconds
            startReading()
            return
        }
        startReading()
        startProtocol()
    }

    /// TLS handshake or, for plain TCP, open at once.
    func startProtocol() {
        if tls != nil {
            state = .handshaking
            layers?.openingDeadline = loop.now + options.tlsHandshakeTimeoutMilliseconds
        } else {
            state = .open
            handler?.connectionDidOpen(self)
        }
    }

    /// Starts a non-blocking connect (client side). Runs on the loop.
    func startConnecting(to address: SocketAddress) {
        loop.register(self)
        do {
            if try loop.syscalls.connect(descriptor, to: address) {
                connectionEstablished()
            } else {
                waitForWritable()
            }
        } catch {
            tearDown(.connectFailed(error))
        }
    }

    func connectionEstablished() {
        if let error = loop.syscalls.pendingSocketError(descriptor) {
            tearDown(.connectFailed(error))
            return
        }
        stopWaitingForWritable()
        startReading()
        guard state != .closed else { return }
        guard let tls else {
            state = .open
            handler?.connectionDidOpen(self)
            return
        }
        state = .handshaking
        layers?.openingDeadline = loop.now + options.tlsHandshakeTimeoutMilliseconds
        advanceHandshake(tls)
    }

    private func startReading() {
        isReading = true
        updateReadiness()
    }
}
