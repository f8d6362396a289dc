// Forwarding: who a connection is for, when proxies stand between the client and the server.
//
// Theory of operation. A connection's TCP peer is its client unless the peer is a proxy the
// operator trusts (`TrustedProxies`, from `--trusted-proxy`). Two layers can then name the real
// client, and each is believed only when what the layer below established is a trusted proxy:
//
//   1. the PROXY protocol header at the start of the connection (ProxyHeader/), from the TCP
//      peer: HAProxy or a cloud TCP load balancer;
//   2. `Forwarded` (RFC 7239) or, when it is absent, `X-Forwarded-For` / `X-Forwarded-Proto` on
//      the HTTP request (Headers/): nginx or another HTTP proxy.
//
// Every proxy appends the address it received the request from, so the list reads left to
// right from the far end towards us and only its right end is vouched for: the nearest proxy
// wrote the last entry, the one before it the entry before, and so on. `resolved(by:trusting:)`
// walks from the right, skipping trusted hops, and takes the first address that is not a
// trusted proxy: whatever a client wrote into the header itself lies to the left of that and is
// never read. When every hop is trusted the leftmost is the client (a request from the proxies'
// own network). A hop that does not name its client (`unknown`, an obfuscated identifier) ends
// the walk: the client is then counted under the nearest trusted proxy's address and marked
// unidentified, which also makes it never loopback.
//
// Loopback. An address is relative to the machine that saw it: 127.0.0.1 in a header written by
// a proxy on another host is that host. So a relayed client is loopback only when its address
// is and so is every address between it and us (the proxies that saw it, down to our own peer):
// the whole path stayed on this machine.
//
// Everything here is sans-I/O: the transport hands in the peer's address and the header, the
// HTTP layer the header values; the result says which address the limits, logs and
// loopback-only checks are to use.

/// The client a connection speaks for, as far as the trusted proxies in front of it say.
public struct ClientOrigin: Sendable, Hashable, CustomStringConvertible {
    public enum Source: String, Sendable, Hashable {
        /// The TCP peer itself.
        case direct
        case proxyProtocol = "proxy_protocol"
        case forwarded
        case xForwardedFor = "x_forwarded_for"
    }

    /// The address per-address limits count and logs show: the client's, or for an
    /// unidentified client the nearest trusted proxy's. Never an IPv4-mapped IPv6 address.
    public var address: IPAddress
    public var source: Source
    /// False when a trusted proxy relayed the connection without saying for whom.
    public var isIdentified: Bool
    /// Whether the client used TLS: our own TLS, or what a trusted proxy says it terminated.
    public var usedTLS: Bool
    /// Loopback-only checks (the admin secret) pass only for a client known to be on this
    /// machine: a proxied connection is loopback only when its real client is, and every proxy
    /// it came through is on this machine too.
    public let isLoopback: Bool

    /// `isPathLocal`: every proxy between the client and us is on this machine.
    public init(address: IPAddress, source: Source, isIdentified: Bool = true, isPathLocal: Bool = true, usedTLS: Bool) {
        self.address = address.unmapped
        self.source = source
        self.isIdentified = isIdentified
        self.usedTLS = usedTLS
        self.isLoopback = isIdentified && isPathLocal && address.isLoopback
    }

    /// The origin the transport establishes: the TCP `peer`, or the client a PROXY header (read
    /// only from trusted peers) names. A LOCAL header is the proxy's own connection, so the peer
    /// is the client; an UNKNOWN one relays someone unnamed.
    public init(peer: IPAddress, proxyHeader: ProxyHeader?, connectionUsesTLS: Bool) {
        guard let proxyHeader else {
            self.init(address: peer, source: .direct, usedTLS: connectionUsesTLS)
            return
        }
        let usedTLS = proxyHeader.clientUsedTLS ?? connectionUsesTLS
        switch proxyHeader.addresses {
        case .local:
            self.init(address: peer, source: .direct, usedTLS: usedTLS)
        case .unknown:
            self.init(address: peer, source: .proxyProtocol, isIdentified: false, usedTLS: usedTLS)
        case .tcp(let source, _, _, _):
            self.init(address: source, source: .proxyProtocol, isPathLocal: peer.isLoopback, usedTLS: usedTLS)
        }
    }

    /// Whether the request's forwarding headers are to be believed: only from a known client
    /// that is itself a trusted proxy.
    public func trustsHeaders(_ trusted: TrustedProxies) -> Bool {
        isIdentified && trusted.contains(address)
    }

    /// The origin after walking the request's forwarding headers (see the theory above). Call
    /// only when `trustsHeaders(trusted)`; throws when a header is malformed.
    public func resolved(by headers: ForwardingHeaders, trusting trusted: TrustedProxies) throws(ForwardedHeaderError) -> ClientOrigin {
        precondition(trustsHeaders(trusted), "forwarding headers resolved for an origin that is not a trusted proxy")
        let hops: [ForwardedHop]
        let source: Source
        if !headers.forwarded.isEmpty {
            hops = try ForwardedHeader.parse(headers.forwarded)
            source = .forwarded
        } else {
            hops = try XForwardedFor.parse(forwardedFor: headers.xForwardedFor, proto: headers.xForwardedProto)
            source = .xForwardedFor
        }
        guard !hops.isEmpty else {
            // X-Forwarded-Proto alone still says how the client reached the proxy.
            var origin = self
            if let scheme = try XForwardedFor.parseProto(headers.xForwardedProto).last, let usedTLS = scheme {
                origin.usedTLS = usedTLS
            }
            return origin
        }
        var nearest = address
        var isPathLocal = isLoopback
        for index in hops.indices.reversed() {
            let hop = hops[index]
            let usedTLS = hop.usedTLS ?? self.usedTLS
            switch hop.node {
            case .unidentified:
                return ClientOrigin(address: nearest, source: source, isIdentified: false, usedTLS: usedTLS)
            case .address(let hopAddress):
                if !trusted.contains(hopAddress) || index == hops.startIndex {
                    return ClientOrigin(address: hopAddress, source: source, isPathLocal: isPathLocal, usedTLS: usedTLS)
                }
                nearest = hopAddress
                isPathLocal = isPathLocal && hopAddress.isLoopback
            }
        }
        fatalError("internal inconsistency in ClientOrigin: the walk passed its leftmost hop")
    }

    public var description: String {
        isIdentified ? address.description : "unidentified via \(address)"
    }
}

/// The forwarding headers of one request, each as the list of its field values in order.
public struct ForwardingHeaders: Sendable, Hashable {
    public var forwarded: [String]
    public var xForwardedFor: [String]
    public var xForwardedProto: [String]

    public init(forwarded: [String] = [], xForwardedFor: [String] = [], xForwardedProto: [String] = []) {
        self.forwarded = forwarded
        self.xForwardedFor = xForwardedFor
        self.xForwardedProto = xForwardedProto
    }

    public var isEmpty: Bool { forwarded.isEmpty && xForwardedFor.isEmpty && xForwardedProto.isEmpty }
}
