// Which proxies are believed about a client's address, and the one log line per untrusted peer
// that sends forwarding headers anyway. The decisions themselves (the right-to-left walk, what a
// PROXY header means) are Forwarding's; this is the server's glue: reading the headers out of a
// request and remembering whom it has already warned about.
import Forwarding
import WebSocketProtocol
import Synchronization

package final class ForwardingPolicy: Sendable {
    package let trusted: TrustedProxies
    private let warnedPeers = Mutex<Set<IPAddress>>([])
    /// Peers remembered as already logged. Past this many the memory starts over, so a scan
    /// from many addresses costs bounded memory and at worst a second line per peer.
    package static let warnedPeerLimit = 10_000

    package init(trusted: TrustedProxies) {
        self.trusted = trusted
    }

    /// The request's forwarding headers.
    package static func headers(of head: HTTPRequestHead) -> ForwardingHeaders {
        ForwardingHeaders(forwarded: head.headers.values(named: "Forwarded"),
                          xForwardedFor: head.headers.values(named: "X-Forwarded-For"),
                          xForwardedProto: head.headers.values(named: "X-Forwarded-Proto"))
    }

    /// True the first time `peer` is reported as sending headers it may not send, false after:
    /// the caller logs only then, so a misconfigured proxy or a probing client costs one line.
    package func isFirstIgnoredHeader(from peer: IPAddress) -> Bool {
        warnedPeers.withLock { peers in
            if peers.count >= Self.warnedPeerLimit { peers.removeAll() }
            return peers.insert(peer).inserted
        }
    }
}
