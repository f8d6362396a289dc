import Testing
@testable import Crypto

@Suite struct DigestTests {
    @Test func sha1MatchesRFC6455Example() {
        // RFC 6455 §1.3: key "dGhlIHNhbXBsZSBub25jZQ==" gives accept "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
        let input = "dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        #expect(Base64.encode(Digest.sha1(Array(input.utf8))) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func hmacSHA256MatchesRFC4231Case2() {
        let mac = Digest.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        let hex = mac.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test func crc32MatchesCheckValue() {
        #expect(Digest.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(Digest.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEquals([1, 2], [1, 2, 3]))
    }
}

@Suite struct Base64Tests {
    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")])
    func encodesRFC4648Vectors(input: String, expected: String) {
        #expect(Base64.encode(Array(input.utf8)) == expected)
        #expect(Base64.decode(expected) == Array(input.utf8))
    }

    @Test func urlSafeRoundTripsEveryByte() {
        let bytes = (0...255).map { UInt8($0) }
        let text = Base64.encode(bytes, urlSafe: true)
        #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
        #expect(Base64.decode(text) == bytes)
    }

    @Test func decodeRejectsGarbage() {
        #expect(Base64.decode("ab$d") == nil)
        #expect(Base64.decode("a") == nil)
        #expect(Base64.decode("Zg==Zg") == nil)
    }
}

@Suite struct PasswordHasherTests {
    let hasher = PasswordHasher(costLog2: 4)

    @Test func verifiesTheRightPasswordOnly() {
        let stored = hasher.hash(password: "correct horse")
        #expect(stored.hasPrefix("scrypt$4$8$1$"))
        #expect(hasher.verify(password: "correct horse", against: stored))
        #expect(!hasher.verify(password: "correct hors", against: stored))
    }

    @Test func saltsEveryHash() {
        #expect(hasher.hash(password: "same") != hasher.hash(password: "same"))
    }

    @Test func rejectsMalformedRecords() {
        #expect(!hasher.verify(password: "x", against: ""))
        #expect(!hasher.verify(password: "x", against: "scrypt$99$8$1$AAAA$AAAA"))
        #expect(!hasher.verify(password: "x", against: "bcrypt$4$8$1$AAAA$AAAA"))
    }
}
