// The keyed binary form of journal entries (format tag 0x02): what JSON gave us — keys, so a
// field added later is simply absent from older records and decodes as nil — without Foundation's
// JSONEncoder, which cost a quarter of the server's time on the publish path.
//
// Theory of operation. A value is one type byte followed by its body:
//   0x00 null
//   0x01 false, 0x02 true
//   0x03 signed integer, zigzag LEB128
//   0x04 unsigned integer, LEB128
//   0x05 double, its IEEE-754 bit pattern as 8 bytes little-endian
//   0x06 string: LEB128 byte count, then UTF-8
//   0x07 keyed container: entries, each LEB128 (key byte count + 1), key UTF-8, value;
//        a 0x00 where the next key length would be ends the container
//   0x08 unkeyed container: values, ended by 0xFF where the next type byte would be
// The encoder streams straight into one byte array. Codable never says when a container is
// finished, so the encoder keeps a stack of open containers: writing into a container closes every
// container opened after it, and a nested value's containers are closed when its `encode(to:)`
// returns. Output is deterministic: the bytes follow the order in which `encode(to:)` writes.
// The decoder is only used on recovery and by the admin inspector, so it favours plainness: it
// parses the record into a `KeyedBinaryNode` tree, then serves Codable from the tree.

enum KeyedBinaryTag {
    static let null: UInt8 = 0x00
    static let falseValue: UInt8 = 0x01
    static let trueValue: UInt8 = 0x02
    static let signed: UInt8 = 0x03
    static let unsigned: UInt8 = 0x04
    static let double: UInt8 = 0x05
    static let string: UInt8 = 0x06
    static let keyed: UInt8 = 0x07
    static let unkeyed: UInt8 = 0x08
    /// Ends a keyed container: a key length of zero (lengths are stored plus one).
    static let endOfKeyed: UInt8 = 0x00
    /// Ends an unkeyed container: a byte that is no type.
    static let endOfUnkeyed: UInt8 = 0xFF
}

extension Array where Element == UInt8 {
    mutating func appendLEB128(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        append(UInt8(rest))
    }

    mutating func appendZigzag(_ value: Int64) {
        appendLEB128(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    // Values, tag and body; shared by the Codable encoder and the direct writer.

    mutating func appendKeyedBinary(signed value: Int64) {
        append(KeyedBinaryTag.signed)
        appendZigzag(value)
    }

    mutating func appendKeyedBinary(unsigned value: UInt64) {
        append(KeyedBinaryTag.unsigned)
        appendLEB128(value)
    }

    mutating func appendKeyedBinary(_ value: Bool) {
        append(value ? KeyedBinaryTag.trueValue : KeyedBinaryTag.falseValue)
    }

    mutating func appendKeyedBinary(_ value: String) {
        append(KeyedBinaryTag.string)
        var text = value
        text.withUTF8 { utf8 in
            appendLEB128(UInt64(utf8.count))
            append(contentsOf: utf8)
        }
    }
}
