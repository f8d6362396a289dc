// Inbox subjects: `_INBOX.<22 random characters>.<token>`, the token a decimal counter.
import Crypto

enum InboxName {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// 22 characters of base 62: 130 bits, so two connections never share an inbox.
    static func random() -> String {
        var generator = SecureRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(22)
        for _ in 0..<22 { bytes.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The token after the inbox prefix, read straight from the subject's bytes.
    static func token(of subject: UnsafeRawBufferPointer, prefixLength: Int) -> UInt64? {
        let count = subject.count - prefixLength
        guard count > 0, count <= 19 else { return nil }
        var value: UInt64 = 0
        for index in prefixLength..<subject.count {
            let digit = subject[index]
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + UInt64(digit - UInt8(ascii: "0"))
        }
        return value
    }
}
