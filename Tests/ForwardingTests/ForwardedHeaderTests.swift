import Testing
@testable import Forwarding

@Suite struct ForwardedHeaderTests {
    func hop(_ text: String, tls: Bool? = nil) -> ForwardedHop { ForwardedHop(node: .address(IPAddress(text)!), usedTLS: tls) }

    @Test func readsTheRFCExamples() throws {
        // RFC 7239 §4 and §7.1.
        #expect(try ForwardedHeader.parse(["for=\"_gazonk\""]) == [ForwardedHop(node: .unidentified)])
        #expect(try ForwardedHeader.parse(["For=\"[2001:db8:cafe::17]:4711\""]) == [hop("2001:db8:cafe::17")])
        #expect(try ForwardedHeader.parse(["for=192.0.2.60;proto=http;by=203.0.113.43"]) == [hop("192.0.2.60", tls: false)])
        #expect(try ForwardedHeader.parse(["for=192.0.2.43, for=198.51.100.17"]) == [hop("192.0.2.43"), hop("198.51.100.17")])
        #expect(try ForwardedHeader.parse(["for=192.0.2.43,for=\"[2001:db8:cafe::17]\",for=unknown"]) ==
                [hop("192.0.2.43"), hop("2001:db8:cafe::17"), ForwardedHop(node: .unidentified)])
    }

    @Test func joinsRepeatedLinesInOrderAndSkipsEmptyElements() throws {
        #expect(try ForwardedHeader.parse(["for=192.0.2.1;proto=https", " , for=\"192.0.2.2:8443\" ,", "for=\"_hidden:_port\""]) ==
                [hop("192.0.2.1", tls: true), hop("192.0.2.2"), ForwardedHop(node: .unidentified)])
    }

    @Test func anElementWithoutForDoesNotNameItsClient() throws {
        #expect(try ForwardedHeader.parse(["proto=https;host=example.com"]) == [ForwardedHop(node: .unidentified, usedTLS: true)])
        #expect(try ForwardedHeader.parse(["for=192.0.2.1 ; proto=wss"]) == [hop("192.0.2.1", tls: true)])
        #expect(try ForwardedHeader.parse(["for=192.0.2.1;proto=gopher"]) == [hop("192.0.2.1")])
    }

    @Test func readsEscapesInQuotedValues() throws {
        #expect(try ForwardedHeader.parse(["for=\"192.0.2.\\1\";by=\"a \\\"quoted\\\" \\\\ name\""]) == [hop("192.0.2.1")])
    }

    @Test(arguments: [
        "for=2001:db8::1",                 // IPv6 must be bracketed, and so quoted
        "for=\"2001:db8::1\"",
        "for=\"[2001:db8::1\"",
        "for=\"[192.0.2.1]\"",
        "for=\"192.0.2.1:\"",
        "for=\"192.0.2.1:123456\"",
        "for=\"192.0.2.1:http\"",
        "for=192.0.2.1;for=192.0.2.2",    // twice in one element
        "for=192.0.2.1 for=192.0.2.2",
        "for=192.0.2.1;proto=\"1http\"",
        "for=\"192.0.2.1",
        "for=\"192.0.2.1\\",
        "for=\"a\u{01}b\"",
        "for=",
        "=192.0.2.1",
        "for 192.0.2.1",
        "for==192.0.2.1",
        "for=localhost",
        "for=_",
        "for=\"_a/b\"",
        "for=192.0.2.1;",
    ])
    func refusesMalformedValues(value: String) {
        if value == "for=192.0.2.1;" {
            // An empty pair after ';' is allowed by the grammar.
            #expect((try? ForwardedHeader.parse([value])) == [hop("192.0.2.1")])
            return
        }
        #expect(throws: ForwardedHeaderError.self, "\(value)") { try ForwardedHeader.parse([value]) }
    }
}

@Suite struct XForwardedForTests {
    @Test func readsEveryFormInUse() throws {
        let hops = try XForwardedFor.parse(forwardedFor: ["203.0.113.7, 2001:db8::1,[2001:db8::2]:443", "192.0.2.9:5000,unknown, [::1]"],
                                           proto: [])
        #expect(hops.map(\.node) == [.address(IPAddress("203.0.113.7")!), .address(IPAddress("2001:db8::1")!),
                                     .address(IPAddress("2001:db8::2")!), .address(IPAddress("192.0.2.9")!),
                                     .unidentified, .address(IPAddress("::1")!)])
    }

    @Test(arguments: ["example.com", "203.0.113.7 203.0.113.8", "203.0.113.7;", "[203.0.113.7]", "2001:db8::1:80]",
                      "[2001:db8::1]x", "203.0.113.7:", "_hidden", "256.1.1.1"])
    func refusesWhatIsNotAnAddress(value: String) {
        #expect(throws: ForwardedHeaderError.self, "\(value)") { try XForwardedFor.parse(forwardedFor: [value], proto: []) }
    }

    @Test func pairsProtoFromTheRightOrUsesTheNearestProxysScheme() throws {
        let paired = try XForwardedFor.parse(forwardedFor: ["192.0.2.1, 192.0.2.2"], proto: ["https, http"])
        #expect(paired.map(\.usedTLS) == [true, false])
        let single = try XForwardedFor.parse(forwardedFor: ["192.0.2.1, 192.0.2.2"], proto: ["https"])
        #expect(single.map(\.usedTLS) == [true, true])
        let uneven = try XForwardedFor.parse(forwardedFor: ["192.0.2.1, 192.0.2.2, 192.0.2.3"], proto: ["http", "wss"])
        #expect(uneven.map(\.usedTLS) == [true, true, true])
        #expect(throws: ForwardedHeaderError.self) { try XForwardedFor.parse(forwardedFor: ["192.0.2.1"], proto: ["ht tp"]) }
    }
}
