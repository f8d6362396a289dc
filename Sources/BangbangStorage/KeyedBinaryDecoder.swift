// Decodes the keyed binary form (see KeyedBinaryFormat.swift). Recovery's journal records and the
// admin inspector are its callers, so it parses into a tree first and then answers Codable from
// the tree; malformed input is a `DecodingError`, never a trap. Values inside a record whose type
// is `KeyedBinaryReadable` (orders, StoredOrderReader.swift) are read from their bytes by their own
// reader, and snapshots, where a restart spends its time, by SnapshotReader.swift, which leaves to
// this decoder what it refuses.
import BangbangCore

enum KeyedBinaryDecoder {
    /// Nesting deeper than this is corruption: journal entries nest a handful of levels.
    static let maximumDepth = 64

    static func decode<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws -> T {
        var reader = KeyedBinaryReader(bytes: bytes)
        let node = try reader.readValue(depth: 0)
        guard reader.isAtEnd else { throw reader.corrupt("trailing bytes after the value") }
        return try T(from: KeyedBinaryValueDecoder(node: node, codingPath: []))
    }
}

indirect enum KeyedBinaryNode {
    case null
    case bool(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    /// The members, and the container's bytes (type byte to end marker) for a `KeyedBinaryReadable`.
    case keyed([String: KeyedBinaryNode], ArraySlice<UInt8>)
    case unkeyed([KeyedBinaryNode])
}

struct KeyedBinaryReader {
    let bytes: ArraySlice<UInt8>
    private(set) var offset: Int

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    var isAtEnd: Bool { offset == bytes.endIndex }

    /// Back to the byte just read, so an error can point at it.
    mutating func stepBack() { offset -= 1 }

    /// Back to `position`, an offset this reader was at before.
    mutating func rewind(to position: Int) { offset = position }

    func corrupt(_ reason: String) -> DecodingError {
        DecodingError.dataCorrupted(DecodingError.Context(
            codingPath: [], debugDescription: "keyed binary record, byte \(offset - bytes.startIndex): \(reason)"))
    }

    mutating func readByte() throws -> UInt8 {
        guard offset < bytes.endIndex else { throw corrupt("record ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readLEB128() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64, shift < 63 || byte <= 1 else { throw corrupt("integer longer than 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    mutating func readUTF8(count: UInt64) throws -> String {
        let utf8 = try readUTF8Bytes(count: count)
        // ASCII is UTF-8. Other text: decoding repairs what is not UTF-8, so the text keeps the
        // same bytes only if they were valid. Both far cheaper than the generic
        // String(validating:as:).
        let text: String? = utf8.withUnsafeBufferPointer { bytes in
            var text = String(decoding: bytes, as: UTF8.self)
            if bytes.allSatisfy({ $0 < 0x80 }) { return text }
            return text.withUTF8 { $0.elementsEqual(bytes) } ? text : nil
        }
        guard let text else {
            offset -= utf8.count
            throw corrupt("string is not UTF-8")
        }
        return text
    }

    /// The next `count` bytes, unchecked: a string's or a key's UTF-8.
    mutating func readUTF8Bytes(count: UInt64) throws -> ArraySlice<UInt8> {
        guard count <= UInt64(bytes.endIndex - offset) else { throw corrupt("string runs past the record") }
        let end = offset + Int(count)
        defer { offset = end }
        return bytes[offset..<end]
    }

    mutating func readValue(depth: Int) throws -> KeyedBinaryNode {
        switch try readByte() {
        case KeyedBinaryTag.null: return .null
        case KeyedBinaryTag.falseValue: return .bool(false)
        case KeyedBinaryTag.trueValue: return .bool(true)
        case KeyedBinaryTag.signed:
            let zigzag = try readLEB128()
            return .signed(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case KeyedBinaryTag.unsigned: return .unsigned(try readLEB128())
        case KeyedBinaryTag.double:
            var pattern: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { pattern |= UInt64(try readByte()) << UInt64(shift) }
            return .double(Double(bitPattern: pattern))
        case KeyedBinaryTag.string: return .string(try readUTF8(count: try readLEB128()))
        case KeyedBinaryTag.keyed:
            guard depth < KeyedBinaryDecoder.maximumDepth else { throw corrupt("nested too deeply") }
            let start = offset - 1
            var members: [String: KeyedBinaryNode] = [:]
            while true {
                let lengthPlusOne = try readLEB128()
                if lengthPlusOne == 0 { return .keyed(members, bytes[start..<offset]) }
                let key = try readUTF8(count: lengthPlusOne - 1)
                guard members[key] == nil else { throw corrupt("key \"\(key)\" appears twice") }
                members[key] = try readValue(depth: depth + 1)
            }
        case KeyedBinaryTag.unkeyed:
            guard depth < KeyedBinaryDecoder.maximumDepth else { throw corrupt("nested too deeply") }
            var elements: [KeyedBinaryNode] = []
            while true {
                guard offset < bytes.endIndex else { throw corrupt("record ends early") }
                if bytes[offset] == KeyedBinaryTag.endOfUnkeyed {
                    offset += 1
                    return .unkeyed(elements)
                }
                elements.append(try readValue(depth: depth + 1))
            }
        case let other:
            offset -= 1
            throw corrupt("unknown type byte \(other)")
        }
    }
}

/// A coding key for positions in an unkeyed container, for error paths.
private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

struct KeyedBinaryValueDecoder: Decoder {
    let node: KeyedBinaryNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .keyed(let members, _) = node else {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "expected a keyed container, found \(node.kind)"))
        }
        return KeyedDecodingContainer(KeyedBinaryKeyedDecoder<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .unkeyed(let elements) = node else {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "expected an unkeyed container, found \(node.kind)"))
        }
        return KeyedBinaryUnkeyedDecoder(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        KeyedBinarySingleValueDecoder(node: node, codingPath: codingPath)
    }
}

extension KeyedBinaryNode {
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .signed, .unsigned: "an integer"
        case .double: "a double"
        case .string: "a string"
        case .keyed: "a keyed container"
        case .unkeyed: "an unkeyed container"
        }
    }
}

struct KeyedBinarySingleValueDecoder: SingleValueDecodingContainer {
    let node: KeyedBinaryNode
    let codingPath: [any CodingKey]

    private func mismatch(_ type: Any.Type) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(type), found \(node.kind)"))
    }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let converted: T?
        switch node {
        case .signed(let value): converted = T(exactly: value)
        case .unsigned(let value): converted = T(exactly: value)
        default: throw mismatch(type)
        }
        guard let converted else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "integer does not fit \(type)"))
        }
        return converted
    }

    func decodeNil() -> Bool {
        if case .null = node { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let value) = node else { throw mismatch(type) }
        return value
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let value) = node else { throw mismatch(type) }
        return value
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard case .double(let value) = node else { throw mismatch(type) }
        return value
    }

    func decode(_ type: Float.Type) throws -> Float {
        guard case .double(let value) = node else { throw mismatch(type) }
        return Float(value)
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // A type that reads itself (orders: every live one is in a snapshot) is read from its
        // container's bytes, to what its Codable conformance would read, several times faster.
        if let readable = type as? any KeyedBinaryReadable.Type, case .keyed(_, let bytes) = node {
            var reader = KeyedBinaryReader(bytes: bytes)
            guard let value = try readable.read(from: &reader) as? T else {
                fatalError("internal inconsistency in decoding \(T.self): its reader made another type")
            }
            return value
        }
        return try T(from: KeyedBinaryValueDecoder(node: node, codingPath: codingPath))
    }
}

struct KeyedBinaryKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: KeyedBinaryNode]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func value(for key: Key) throws -> KeyedBinarySingleValueDecoder {
        guard let node = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
        }
        return KeyedBinarySingleValueDecoder(node: node, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(for: key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(for: key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(for: key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(for: key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(for: key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(for: key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(for: key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(for: key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(for: key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(for: key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(for: key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(for: key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(for: key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(for: key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(for: key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(for: key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let child = try value(for: key)
        return try KeyedBinaryValueDecoder(node: child.node, codingPath: child.codingPath).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let child = try value(for: key)
        return try KeyedBinaryValueDecoder(node: child.node, codingPath: child.codingPath).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "superDecoder is not supported"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "superDecoder is not supported"))
    }
}

struct KeyedBinaryUnkeyedDecoder: UnkeyedDecodingContainer {
    let elements: [KeyedBinaryNode]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [KeyedBinaryNode], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next(_ type: Any.Type) throws -> KeyedBinarySingleValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "unkeyed container is at its end"))
        }
        defer { currentIndex += 1 }
        return KeyedBinarySingleValueDecoder(node: elements[currentIndex], codingPath: codingPath + [IndexKey(index: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, case .null = elements[currentIndex] else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let child = try next([String: Any].self)
        return try KeyedBinaryValueDecoder(node: child.node, codingPath: child.codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let child = try next([Any].self)
        return try KeyedBinaryValueDecoder(node: child.node, codingPath: child.codingPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "superDecoder is not supported"))
    }
}
