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

/// The integer encodings, written at a pointer with room for `maximumBytes`: the one definition
/// the array helpers below and `KeyedBinaryWriter`'s buffer both use.
enum KeyedBinaryInteger {
    static let maximumBytes = 10

    /// Writes `value` as LEB128 at `pointer`; returns how many bytes that took.
    static func writeLEB128(_ value: UInt64, at pointer: UnsafeMutableRawPointer) -> Int {
        var rest = value
        var count = 0
        while rest >= 0x80 {
            pointer.storeBytes(of: UInt8(truncatingIfNeeded: rest) | 0x80, toByteOffset: count, as: UInt8.self)
            rest >>= 7
            count += 1
        }
        pointer.storeBytes(of: UInt8(rest), toByteOffset: count, as: UInt8.self)
        return count + 1
    }

    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }
}

extension Array where Element == UInt8 {
    mutating func appendLEB128(_ value: UInt64) {
        withUnsafeTemporaryAllocation(byteCount: KeyedBinaryInteger.maximumBytes, alignment: 1) { buffer in
            let count = KeyedBinaryInteger.writeLEB128(value, at: buffer.baseAddress!)
            append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    mutating func appendZigzag(_ value: Int64) {
        appendLEB128(KeyedBinaryInteger.zigzag(value))
    }

    // Values, tag and body, for the Codable encoder (`KeyedBinaryWriter` writes the same).

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
        value.withUTF8Bytes { utf8 in
            appendLEB128(UInt64(utf8.count))
            append(contentsOf: utf8)
        }
    }
}

extension String {
    /// Calls `body` with the text's UTF-8 bytes: lent as they are by a native or small string,
    /// copied only from a bridged one.
    func withUTF8Bytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let result = utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
        var text = self
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }
}
