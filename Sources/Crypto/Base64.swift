// Base64 (RFC 4648 §4) and its URL-safe unpadded form (§5), without Foundation.
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafe = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Collection<UInt8>, urlSafe: Bool = false) -> String {
        let alphabet = urlSafe ? Self.urlSafe : Self.standard
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(alphabet[Int(value >> 6 & 63)])
            output.append(alphabet[Int(value & 63)])
            index += 3
        }
        let remaining = input.count - index
        if remaining > 0 {
            var value = UInt32(input[index]) << 16
            if remaining == 2 { value |= UInt32(input[index + 1]) << 8 }
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            if remaining == 2 { output.append(alphabet[Int(value >> 6 & 63)]) }
            if !urlSafe {
                output.append(UInt8(ascii: "="))
                if remaining == 1 { output.append(UInt8(ascii: "=")) }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes either alphabet, padded or not; nil on any other character or a bad length.
    public static func decode(_ text: String) -> [UInt8]? {
        var values = [UInt8]()
        values.reserveCapacity(text.utf8.count)
        var sawPadding = false
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "="): sawPadding = true; continue
            default: return nil
            }
            if sawPadding { return nil }
            values.append(value)
        }
        if values.count % 4 == 1 { return nil }
        var output = [UInt8]()
        output.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            var accumulator: UInt32 = 0
            for value in chunk { accumulator = accumulator << 6 | UInt32(value) }
            accumulator <<= UInt32(6 * (4 - chunk.count))
            output.append(UInt8(accumulator >> 16 & 0xFF))
            if chunk.count > 2 { output.append(UInt8(accumulator >> 8 & 0xFF)) }
            if chunk.count > 3 { output.append(UInt8(accumulator & 0xFF)) }
            index += 4
        }
        return output
    }
}
