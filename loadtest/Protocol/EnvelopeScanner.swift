// Finds the top-level members of a server message without building a JSON tree: a reply carries
// a whole order in its "data", and parsing it for every acknowledgement would make the driver,
// not the server, the thing measured. The scanner walks the bytes once, skipping nested values
// (strings with their escapes, objects and arrays by depth), and records where "event", "id",
// "ok", "error" and "data" sit. Values are parsed only when a scenario asks for them.

struct EnvelopeMembers {
    var event: Range<Int>?
    var id: Range<Int>?
    var ok: Range<Int>?
    var error: Range<Int>?
    var data: Range<Int>?
}

enum EnvelopeScanner {
    /// The members of the top-level object in `bytes`, or nil when it is not a well-formed object
    /// as far as the scan can tell (the caller then uses the full parser, which says why).
    static func scan(_ bytes: UnsafeRawBufferPointer) -> EnvelopeMembers? {
        var members = EnvelopeMembers()
        var position = skipSpace(bytes, 0)
        guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { return nil }
        position += 1
        while true {
            position = skipSpace(bytes, position)
            guard position < bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: "}") { return members }
            if bytes[position] == UInt8(ascii: ",") { position = skipSpace(bytes, position + 1) }
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\""),
                  let keyEnd = endOfString(bytes, position) else { return nil }
            let key = (position + 1)..<(keyEnd - 1)
            position = skipSpace(bytes, keyEnd)
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipSpace(bytes, position + 1)
            guard let valueEnd = endOfValue(bytes, valueStart) else { return nil }
            let value = valueStart..<valueEnd
            switch key.count {
            case 2 where matches(bytes, key, "id"): members.id = value
            case 2 where matches(bytes, key, "ok"): members.ok = value
            case 4 where matches(bytes, key, "data"): members.data = value
            case 5 where matches(bytes, key, "event"): members.event = value
            case 5 where matches(bytes, key, "error"): members.error = value
            default: break
            }
            position = valueEnd
        }
    }

    /// An integer value's number, or nil when the range is not a plain integer.
    static func integer(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int64? {
        var index = range.lowerBound
        let negative = index < range.upperBound && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < range.upperBound else { return nil }
        var value: Int64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            guard !overflowed else { return nil }
            value = shifted + Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    static func matches(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        return text.withUTF8Buffer { expected in
            for offset in 0..<expected.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
            return true
        }
    }

    private static func skipSpace(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int {
        var position = start
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return position
            }
        }
        return position
    }

    /// The index just past the string starting at `start` (its opening quote).
    private static func endOfString(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        var position = start + 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""): return position + 1
            case UInt8(ascii: "\\"): position += 2
            default: position += 1
            }
        }
        return nil
    }

    /// The index just past the value starting at `start`.
    private static func endOfValue(_ bytes: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return endOfString(bytes, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var position = start
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    guard let end = endOfString(bytes, position) else { return nil }
                    position = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return position + 1 }
                default:
                    break
                }
                position += 1
            }
            return nil
        default:
            var position = start
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"),
                     UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    return position == start ? nil : position
                default:
                    position += 1
                }
            }
            return nil
        }
    }
}
