// Serializes JSON into a byte buffer the caller owns, so a reply or a broadcast is encoded once
// into one array with no intermediate strings. Object members are written in key order, which
// keeps output deterministic for tests and diffs.

public struct JSONWriter {
    public private(set) var bytes: [UInt8]

    /// 1 KiB holds a reply carrying one order without growing the buffer on the way.
    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let integer): write(integer: integer)
        case .double(let double): writeDouble(double)
        case .string(let text): write(string: text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            writeSortedByKey(members)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Above this many members a plain sort beats insertion sort's quadratic worst case.
    private static let insertionSortLimit = 32

    /// Writes `members` in key order, for deterministic output. The order is worked out on a
    /// buffer of dictionary indices on the stack (insertion sort: our objects have a handful of
    /// members), so writing an object allocates nothing and hashes no key again.
    private mutating func writeSortedByKey(_ members: [String: JSONValue]) {
        guard !members.isEmpty else { return }
        guard members.count <= Self.insertionSortLimit else {
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: key)
                bytes.append(UInt8(ascii: ":"))
                write(members[key]!)
            }
            return
        }
        withUnsafeTemporaryAllocation(of: Dictionary<String, JSONValue>.Index.self, capacity: members.count) { order in
            _ = order.initialize(fromContentsOf: members.indices)
            defer { order.deinitialize() }
            for unsorted in 1..<order.count {
                let index = order[unsorted]
                let key = members[index].key
                var slot = unsorted
                while slot > 0 && key < members[order[slot - 1]].key {
                    order[slot] = order[slot - 1]
                    slot -= 1
                }
                order[slot] = index
            }
            for position in order.indices {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                let member = members[order[position]]
                write(string: member.key)
                bytes.append(UInt8(ascii: ":"))
                write(member.value)
            }
        }
    }

    // MARK: Streaming
    //
    // Hot messages (an order in a reply, a push or a feed event) are written member by member
    // with these, skipping the `JSONValue` tree and its dictionaries. Callers write members in
    // key order, so the bytes are exactly what `write(_:)` makes of the same value.

    public mutating func beginObject() { bytes.append(UInt8(ascii: "{")) }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")) }
    public mutating func beginArray() { bytes.append(UInt8(ascii: "[")) }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")) }

    /// Starts an object member: a comma unless it is the first, the key, the colon. The key must
    /// need no escaping.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A comma unless a container was just opened; call before each array element.
    public mutating func separate() {
        if let last = bytes.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "[") {
            bytes.append(UInt8(ascii: ","))
        }
    }

    public mutating func write(integer value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            // The magnitude of Int64.min fits in UInt64.
            write(digitsOf: UInt64(bitPattern: 0 &- value))
        } else {
            write(digitsOf: UInt64(value))
        }
    }

    public mutating func write(bool value: Bool) {
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Appends bytes that are already one complete JSON value (made by this writer).
    public mutating func write(encoded value: [UInt8]) {
        bytes.append(contentsOf: value)
    }

    private mutating func write(digitsOf value: UInt64) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var start = 20
            while rest > 0 {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    private mutating func writeDouble(_ double: Double) {
        // Swift's shortest round-trip form ("0.25", "1000.0", "1e+20") is valid JSON and parses
        // back to the same double; the ".0" keeps integral doubles from turning into integers.
        guard double.isFinite else { bytes.append(contentsOf: "null".utf8); return }
        bytes.append(contentsOf: double.description.utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = string
        text.withUTF8 { utf8 in
            // Runs of bytes that need no escape are copied whole.
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscaped(byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
    }
}
