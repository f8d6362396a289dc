import Testing
@testable import Forwarding

@Suite struct IPAddressTests {
    @Test(arguments: [("0.0.0.0", UInt32(0)), ("127.0.0.1", 0x7F00_0001), ("255.255.255.255", 0xFFFF_FFFF),
                      ("192.0.2.10", 0xC000_020A)])
    func parsesDottedDecimal(text: String, value: UInt32) {
        #expect(IPAddress(text) == IPAddress(ipv4: value))
        #expect(IPAddress(text)?.description == text)
    }

    @Test(arguments: ["", "1.2.3", "1.2.3.4.5", "1..2.3", ".1.2.3", "1.2.3.", "256.0.0.1", "01.2.3.4", "1.2.3.00",
                      "1.2.3.4 ", " 1.2.3.4", "1.2.3.a", "1.2.3.4/8", "1.2.3.4:80", "1234.1.1.1", "0x7f.0.0.1"])
    func refusesWhatIsNotDottedDecimal(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test(arguments: [
        ("::", "::"), ("::1", "::1"), ("1::", "1::"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("2001:db8:0000:0001:0000:0000:0000:0001", "2001:db8:0:1::1"),   // the longest run is compressed
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),                   // the first of equal runs
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),                // a single zero group stays
        ("fe80::1:2:3:4", "fe80::1:2:3:4"),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        ("::ffff:192.0.2.1", "::ffff:192.0.2.1"), ("::FFFF:c000:201", "::ffff:192.0.2.1"),
        ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
    ])
    func parsesIPv6AndWritesItAsRFC5952Says(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.family == .v6)
        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: [":", ":::", "1:2", "1::2::3", ":1::", "1::2:", "1:2:3:4:5:6:7:8:9", "12345::", "g::",
                      "1:2:3:4:5:6:7:8::", "::1.2.3", "::1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4", "fe80::1%eth0",
                      "[::1]", "::ffff:01.2.3.4"])
    func refusesWhatIsNotIPv6(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func buildsFromNetworkBytes() {
        #expect(IPAddress(networkBytes: [127, 0, 0, 1]) == IPAddress("127.0.0.1"))
        #expect(IPAddress(networkBytes: [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]) == IPAddress("2001:db8::1"))
    }

    @Test func unmapsIPv4MappedAddressesOnly() {
        #expect(IPAddress("::ffff:10.1.2.3")!.unmapped == IPAddress("10.1.2.3"))
        #expect(IPAddress("::10.1.2.3")!.unmapped == IPAddress("::10.1.2.3"))
        #expect(IPAddress("2001:db8::1")!.unmapped == IPAddress("2001:db8::1"))
        #expect(IPAddress("10.1.2.3")!.unmapped == IPAddress("10.1.2.3"))
    }

    @Test func loopbackIsAll127AndColonColonOne() {
        for text in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.2"] { #expect(IPAddress(text)!.isLoopback, "\(text)") }
        for text in ["128.0.0.1", "126.255.255.255", "::", "::2", "0.0.0.0", "::ffff:10.0.0.1", "::127.0.0.1", "1::1", "fe80::1"] {
            #expect(!IPAddress(text)!.isLoopback, "\(text)")
        }
    }
}

@Suite struct AddressRangeTests {
    func range(_ text: String) throws -> AddressRange { try AddressRange(parsing: text) }

    @Test func ipv4RangesContainExactlyTheirPrefix() throws {
        let tens = try range("10.0.0.0/8")
        #expect(tens.contains(IPAddress("10.0.0.0")!))
        #expect(tens.contains(IPAddress("10.255.255.255")!))
        #expect(!tens.contains(IPAddress("11.0.0.0")!))
        #expect(!tens.contains(IPAddress("9.255.255.255")!))
        let odd = try range("192.0.2.64/27")
        #expect(odd.contains(IPAddress("192.0.2.95")!))
        #expect(!odd.contains(IPAddress("192.0.2.96")!))
        #expect(!odd.contains(IPAddress("192.0.2.63")!))
    }

    @Test func aBareAddressIsOneHost() throws {
        let host = try range("127.0.0.1")
        #expect(host.prefixLength == 32)
        #expect(host.contains(IPAddress("127.0.0.1")!))
        #expect(!host.contains(IPAddress("127.0.0.2")!))
        #expect(try range("::1").prefixLength == 128)
    }

    @Test func zeroPrefixesContainTheirWholeFamilyOnly() throws {
        #expect(try range("0.0.0.0/0").contains(IPAddress("203.0.113.9")!))
        #expect(!(try range("0.0.0.0/0").contains(IPAddress("2001:db8::1")!)))
        #expect(try range("::/0").contains(IPAddress("2001:db8::1")!))
        #expect(!(try range("::/0").contains(IPAddress("203.0.113.9")!)))
    }

    @Test func ipv6RangesCompareAcrossTheWordBoundary() throws {
        let site = try range("fd00:1:2:3:8000::/65")
        #expect(site.contains(IPAddress("fd00:1:2:3:ffff::1")!))
        #expect(!site.contains(IPAddress("fd00:1:2:3:7fff::1")!))
        let documentation = try range("2001:db8::/32")
        #expect(documentation.contains(IPAddress("2001:db8:ffff::1")!))
        #expect(!documentation.contains(IPAddress("2001:db9::")!))
        #expect(try range("fe80::/10").contains(IPAddress("febf::1")!))
        #expect(!(try range("fe80::/10").contains(IPAddress("fec0::1")!)))
    }

    @Test func mappedAddressesAndMappedRangesMeetAsIPv4() throws {
        #expect(try range("10.0.0.0/8").contains(IPAddress("::ffff:10.9.8.7")!))
        let mapped = try range("::ffff:10.0.0.0/104")
        #expect(mapped == (try range("10.0.0.0/8")))
        #expect(mapped.contains(IPAddress("10.1.1.1")!))
    }

    @Test(arguments: [("10.0.0.0/33", AddressRange.ParseError.badPrefixLength), ("::/129", .badPrefixLength),
                      ("10.0.0.0/", .badPrefixLength), ("10.0.0.0/-1", .badPrefixLength), ("10.0.0.0/08x", .badPrefixLength),
                      ("10.0.0.0/+8", .badPrefixLength), ("localhost", .notAnAddress), ("", .notAnAddress),
                      ("10.0.0/8", .notAnAddress), ("/8", .notAnAddress)])
    func refusesWhatIsNotARange(text: String, error: AddressRange.ParseError) {
        #expect(throws: error) { try AddressRange(parsing: text) }
    }

    @Test func hostBitsAfterThePrefixSuggestTheNetwork() {
        #expect(throws: AddressRange.ParseError.hostBitsSet(network: AddressRange(network: IPAddress("10.0.0.0")!, prefixLength: 8))) {
            try AddressRange(parsing: "10.0.0.1/8")
        }
        #expect("\(AddressRange.ParseError.hostBitsSet(network: AddressRange(network: IPAddress("fd00::")!, prefixLength: 8)))"
                .contains("fd00::/8"))
    }

    @Test func trustedProxiesMatchAnyOfTheirRanges() throws {
        let trusted = TrustedProxies([try range("127.0.0.1"), try range("10.0.0.0/8"), try range("fd00::/8")])
        #expect(trusted.contains(IPAddress("127.0.0.1")!))
        #expect(trusted.contains(IPAddress("10.20.30.40")!))
        #expect(trusted.contains(IPAddress("fdab::1")!))
        #expect(!trusted.contains(IPAddress("127.0.0.2")!))
        #expect(!trusted.contains(IPAddress("::1")!))
        #expect(!TrustedProxies().contains(IPAddress("127.0.0.1")!))
    }
}
