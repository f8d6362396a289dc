import Testing
@testable import Forwarding

@Suite struct ClientOriginTests {
    static let nginx = IPAddress("127.0.0.1")!
    static let trusted = TrustedProxies([try! AddressRange(parsing: "127.0.0.1"), try! AddressRange(parsing: "10.0.0.0/8")])

    func origin(behind peer: IPAddress = nginx, xForwardedFor: [String] = [], proto: [String] = [],
                forwarded: [String] = [], usesTLS: Bool = false) throws -> ClientOrigin {
        let direct = ClientOrigin(peer: peer, proxyHeader: nil, connectionUsesTLS: usesTLS)
        return try direct.resolved(by: ForwardingHeaders(forwarded: forwarded, xForwardedFor: xForwardedFor, xForwardedProto: proto),
                                   trusting: Self.trusted)
    }

    @Test func takesTheFirstUntrustedAddressFromTheRight() throws {
        let client = try origin(xForwardedFor: ["198.51.100.20, 203.0.113.7, 10.1.1.1"])
        #expect(client == ClientOrigin(address: IPAddress("203.0.113.7")!, source: .xForwardedFor, usedTLS: false))
    }

    @Test func whatAClientWritesLeftOfTheFirstUntrustedHopIsNeverRead() throws {
        // The client sent "X-Forwarded-For: 127.0.0.1, 10.0.0.5" itself; nginx appended its address.
        let client = try origin(xForwardedFor: ["127.0.0.1, 10.0.0.5, 198.51.100.20"])
        #expect(client.address == IPAddress("198.51.100.20"))
        #expect(!client.isLoopback)
    }

    @Test func whenEveryHopIsTrustedTheLeftmostIsTheClient() throws {
        let client = try origin(xForwardedFor: ["10.0.0.9, 10.0.0.8"])
        #expect(client.address == IPAddress("10.0.0.9"))
        #expect(client.isIdentified)
        #expect(try origin(xForwardedFor: ["127.0.0.1"]).isLoopback, "a client on the proxy's machine is loopback")
    }

    @Test func aHopThatNamesNoOneLeavesTheClientUnidentifiedUnderTheNearestProxy() throws {
        let client = try origin(xForwardedFor: ["203.0.113.7, unknown, 10.0.0.3"])
        #expect(client == ClientOrigin(address: IPAddress("10.0.0.3")!, source: .xForwardedFor, isIdentified: false, usedTLS: false))
        let local = try origin(forwarded: ["for=unknown"])
        #expect(local.address == Self.nginx)
        #expect(!local.isLoopback, "relayed for someone unnamed: not loopback even though the proxy is")
    }

    @Test func loopbackMeansThatEveryHopOnTheWayIsOnThisMachine() throws {
        #expect(try origin(xForwardedFor: ["127.0.0.5"]).isLoopback, "a client on the machine of our local proxy")
        // A proxy on another host wrote 127.0.0.1: that is its own machine, not ours.
        #expect(!(try origin(behind: IPAddress("10.0.0.5")!, xForwardedFor: ["127.0.0.1"]).isLoopback))
        #expect(!(try origin(xForwardedFor: ["127.0.0.1, 10.0.0.5"]).isLoopback), "through a remote hop")
        #expect(try origin(xForwardedFor: ["127.0.0.1, 127.0.0.1"]).isLoopback)
        let remoteProxy = ClientOrigin(peer: IPAddress("10.0.0.5")!, proxyHeader: ProxyHeader(version: .two, addresses: .tcp(
            source: IPAddress("127.0.0.1")!, sourcePort: 1, destination: IPAddress("10.0.0.1")!, destinationPort: 2)),
                                       connectionUsesTLS: false)
        #expect(!remoteProxy.isLoopback)
        #expect(!ClientOrigin(peer: IPAddress("10.0.0.5")!, proxyHeader: nil, connectionUsesTLS: false).isLoopback)
    }

    @Test func forwardedWinsOverXForwardedFor() throws {
        let client = try origin(xForwardedFor: ["198.51.100.1"], forwarded: ["for=\"[2001:db8::7]:4711\";proto=https"])
        #expect(client == ClientOrigin(address: IPAddress("2001:db8::7")!, source: .forwarded, usedTLS: true))
    }

    @Test func protoSaysWhetherTheClientUsedTLS() throws {
        #expect(try origin(xForwardedFor: ["198.51.100.1"], proto: ["https"]).usedTLS)
        #expect(!(try origin(xForwardedFor: ["198.51.100.1"], proto: ["http"], usesTLS: true).usedTLS))
        #expect(try origin(xForwardedFor: ["198.51.100.1"], usesTLS: true).usedTLS, "unsaid: our own transport")
        let protoOnly = try origin(proto: ["https"])
        #expect(protoOnly.usedTLS && protoOnly.address == Self.nginx && protoOnly.source == .direct)
    }

    @Test func mappedAddressesAreUnmapped() throws {
        let client = try origin(behind: IPAddress("::ffff:127.0.0.1")!, xForwardedFor: ["::ffff:203.0.113.7"])
        #expect(client.address == IPAddress("203.0.113.7"))
        #expect(client.address.description == "203.0.113.7")
    }

    @Test func onlyAnIdentifiedTrustedOriginsHeadersCount() {
        #expect(ClientOrigin(peer: Self.nginx, proxyHeader: nil, connectionUsesTLS: false).trustsHeaders(Self.trusted))
        #expect(!ClientOrigin(peer: IPAddress("127.0.0.2")!, proxyHeader: nil, connectionUsesTLS: false).trustsHeaders(Self.trusted))
        let unknown = ClientOrigin(peer: Self.nginx, proxyHeader: ProxyHeader(version: .one, addresses: .unknown), connectionUsesTLS: false)
        #expect(!unknown.trustsHeaders(Self.trusted))
    }

    @Test func aProxyHeaderNamesTheClientOrTheProxyItself() {
        let relayed = ClientOrigin(peer: Self.nginx, proxyHeader: ProxyHeader(version: .two, addresses: .tcp(
            source: IPAddress("203.0.113.7")!, sourcePort: 5000, destination: IPAddress("10.0.0.1")!, destinationPort: 443),
                                                                            clientUsedTLS: true), connectionUsesTLS: false)
        #expect(relayed == ClientOrigin(address: IPAddress("203.0.113.7")!, source: .proxyProtocol, usedTLS: true))
        let healthCheck = ClientOrigin(peer: Self.nginx, proxyHeader: ProxyHeader(version: .two, addresses: .local), connectionUsesTLS: true)
        #expect(healthCheck == ClientOrigin(address: Self.nginx, source: .direct, usedTLS: true))
        #expect(healthCheck.isLoopback)
        let unnamed = ClientOrigin(peer: Self.nginx, proxyHeader: ProxyHeader(version: .one, addresses: .unknown), connectionUsesTLS: false)
        #expect(!unnamed.isIdentified && !unnamed.isLoopback && unnamed.address == Self.nginx)
    }

    @Test func aMalformedHeaderFromATrustedPeerThrows() {
        #expect(throws: ForwardedHeaderError.self) { try origin(xForwardedFor: ["203.0.113.7, not-an-address"]) }
        #expect(throws: ForwardedHeaderError.self) { try origin(forwarded: ["for=[2001:db8::1]"]) }
    }
}
