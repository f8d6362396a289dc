// Serializes JSON into a byte buffer the caller owns, so a reply or a broadcast is encoded once
// into one array with no intermediate strings. Keys are written in the order given, which keeps
// output deterministic for tests and diffs.

public struct JSONWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
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
        case .integer(let integer): bytes.append(contentsOf: String(integer).utf8)
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

    private mutating func writeDouble(_ double: Double) {
        // Swift's shortest round-trip form ("0.25", "1000.0", "1e+20") is valid JSON and parses
        // back to the same double; the ".0" keeps integral doubles from turning into integers.
        guard double.isFinite else { bytes.append(contentsOf: "null".utf8); return }
        bytes.append(contentsOf: double.description.utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
