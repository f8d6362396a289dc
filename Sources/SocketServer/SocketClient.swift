// Outgoing connections on the same loops and machinery as accepted ones.
import Glibc
import Platform

/// Opens client connections (tests and the load-test driver).
public enum SocketClient {
    /// Starts connecting to `host:port` (a numeric address or a name; the first resolved address
    /// is used) from `loop`. With `sourceAddress` (e.g. `127.0.0.2`) the socket is bound to that
    /// local address first, so many connections can be spread over several source addresses
    /// without running out of ephemeral ports. With `tls`, a TLS handshake follows the TCP
    /// connect; a verifying context checks that the certificate names `serverName` (default:
    /// `host`, a name or a literal address), which is also sent as SNI when it is a name. Success is `handler.connectionDidOpen`, failure `connectionDidClose` with
    /// `.connectFailed` or `.tlsFailure`. Safe from any thread; throws only for a bad address or
    /// when no descriptor is available.
    @discardableResult
    public static func connect(host: String, port: Int, sourceAddress: String? = nil, loop: EventLoop,
                               tls: TLSContext? = nil, serverName: String? = nil,
                               options: ConnectionOptions = ConnectionOptions(),
                               handler: ConnectionHandler) throws(SocketError) -> Connection {
        let remote = try resolveFirst(host: host, port: port)
        if let tls { precondition(!tls.isServer, "a client needs a client TLS context") }
        let descriptor: Int32
        do {
            descriptor = try loop.syscalls.socket(family: remote.family)
        } catch {
            throw .system(call: "socket", error)
        }
        do throws(SocketError) {
            if let sourceAddress {
                let local = try resolveFirst(host: sourceAddress, port: 0)
                do {
                    // Lets the kernel pick the port at connect time per destination, not per bind,
                    // so one source address serves far more than 28k connections.
                    try? loop.syscalls.setOption(descriptor, level: Int32(IPPROTO_IP), name: IP_BIND_ADDRESS_NO_PORT, value: 1)
                    try loop.syscalls.bind(descriptor, to: local)
                } catch {
                    throw SocketError.system(call: "bind to \(sourceAddress)", error)
                }
            }
            try? loop.syscalls.setOption(descriptor, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
        } catch {
            loop.syscalls.close(descriptor)
            throw error
        }
        var session: TLSSession?
        if let tls {
            do {
                let peerName = serverName ?? host
                session = try TLSSession(context: tls, serverName: numericOrName(peerName), expectedPeerName: peerName)
            } catch {
                loop.syscalls.close(descriptor)
                throw error
            }
        }
        let connection = Connection(descriptor: descriptor, remoteAddress: remote, loop: loop,
                                    context: ConnectionContext(options: options), tls: session, handler: handler,
                                    state: .connecting)
        let unsafeConnection = UncheckedBox(connection)
        loop.execute { unsafeConnection.value.startConnecting(to: remote) }
        return connection
    }

    private static func resolveFirst(host: String, port: Int) throws(SocketError) -> SocketAddress {
        let addresses = try SocketAddress.resolve(host: host, port: port)
        return addresses[0]
    }

    /// SNI carries host names only, never literal addresses (RFC 6066 §3).
    private static func numericOrName(_ host: String) -> String? {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 { return nil }
        return host
    }
}

/// Carries a loop-confined value to its loop.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
