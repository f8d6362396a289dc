// The one log line per untrusted peer that sends forwarding headers, and the bound on the
// memory of whom was already logged.
import Forwarding
import Testing
import WebSocketProtocol
@testable import WebSocketServer

@Suite struct ForwardingPolicyTests {
    @Test func aPeerIsReportedOnceThenRememberedUntilTheMemoryStartsOver() {
        let policy = ForwardingPolicy(trusted: TrustedProxies())
        let peer = IPAddress("192.0.2.7")!
        #expect(policy.isFirstIgnoredHeader(from: peer))
        #expect(!policy.isFirstIgnoredHeader(from: peer))
        for index in 1..<(ForwardingPolicy.warnedPeerLimit - 1) {
            let other = IPAddress("10.\(index >> 16 & 0xFF).\(index >> 8 & 0xFF).\(index & 0xFF)")!
            #expect(policy.isFirstIgnoredHeader(from: other))
        }
        #expect(!policy.isFirstIgnoredHeader(from: peer), "still remembered one short of the limit")
        #expect(policy.isFirstIgnoredHeader(from: IPAddress("198.51.100.1")!), "the last peer that fits")
        #expect(policy.isFirstIgnoredHeader(from: peer), "once full, the memory starts over")
    }

    @Test func theForwardingHeadersAreReadFromTheRequest() throws {
        var head = HTTPRequestHead(method: "GET", target: "/ws")
        head.headers.replaceOrAppend(name: "X-Forwarded-For", value: "203.0.113.9")
        head.headers.replaceOrAppend(name: "Forwarded", value: "for=203.0.113.8")
        let headers = ForwardingPolicy.headers(of: head)
        #expect(headers.forwarded == ["for=203.0.113.8"])
        #expect(headers.xForwardedFor == ["203.0.113.9"])
        #expect(headers.xForwardedProto.isEmpty)
        #expect(!headers.isEmpty)
        #expect(ForwardingPolicy.headers(of: HTTPRequestHead(method: "GET", target: "/ws")).isEmpty)
    }
}
