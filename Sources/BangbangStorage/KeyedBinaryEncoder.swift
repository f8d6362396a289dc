// Encodes any Encodable into the keyed binary form (see KeyedBinaryFormat.swift for the layout
// and for how containers are closed). One encode call owns one `KeyedBinarySink`; nothing is shared
// between calls, so it may run on any thread.

import BangbangCore

enum KeyedBinaryEncoder {
    /// The encoding of `value`, after `header` (the journal's format tag). Values inside it that
    /// are `KeyedBinaryWritable` (orders, board shards) write themselves, unless `usesDirectWriters` is false
    /// (tests compare both).
    /// `capacity`: the bytes to reserve up front, when the caller can tell about how many there
    /// will be (a snapshot: about as many as the last one), so a large encoding is not copied
    /// each time it outgrows its buffer.
    static func encode(_ value: some Encodable, after header: UInt8, usesDirectWriters: Bool = true,
                       capacity: Int = 0) throws -> [UInt8] {
        let sink = KeyedBinarySink()
        sink.bytes.reserveCapacity(capacity)
        sink.usesDirectWriters = usesDirectWriters
        sink.bytes.append(header)
        try sink.encodeValue(value)
        sink.closeContainers(downTo: 0)
        return sink.bytes
    }
}

/// The output buffer and the stack of containers still open in it.
final class KeyedBinarySink {
    var bytes: [UInt8]
    /// One entry per open container, innermost last: its identity shifted left once, low bit set
    /// for an unkeyed container.
    private var open: [UInt64] = []
    private var nextIdentity: UInt64 = 1
    var usesDirectWriters = true

    init() {
        // A publish record (the whole order) is a few hundred bytes; one reservation covers it.
        bytes = []
        bytes.reserveCapacity(512)
        open.reserveCapacity(8)
    }

    var depth: Int { open.count }

    func encodeValue<Value: Encodable>(_ value: Value) throws {
        if usesDirectWriters, let writable = value as? any KeyedBinaryWritable {
            // Shards and their orders are most of a snapshot: written directly, the same bytes as
            // through Codable.
            var writer = KeyedBinaryWriter(continuing: bytes)
            bytes = []
            writable.write(to: &writer)
            bytes = writer.bytes
            return
        }
        let depthBefore = open.count
        let countBefore = bytes.count
        try value.encode(to: KeyedBinaryValueEncoder(sink: self, depth: depthBefore))
        closeContainers(downTo: depthBefore)
        // A type that encodes nothing at all is an empty keyed container, as JSONEncoder makes it `{}`.
        if bytes.count == countBefore {
            bytes.append(KeyedBinaryTag.keyed)
            bytes.append(KeyedBinaryTag.endOfKeyed)
        }
    }

    /// Writes the end marker of every container deeper than `depth`.
    func closeContainers(downTo depth: Int) {
        while open.count > depth {
            let entry = open.removeLast()
            bytes.append(entry & 1 == 1 ? KeyedBinaryTag.endOfUnkeyed : KeyedBinaryTag.endOfKeyed)
        }
    }

    /// Opens a container at `depth` and returns its identity.
    func openContainer(at depth: Int, isUnkeyed: Bool) -> UInt64 {
        closeContainers(downTo: depth)
        precondition(open.count == depth, "KeyedBinaryEncoder: a container was requested for a value that is already finished")
        bytes.append(isUnkeyed ? KeyedBinaryTag.unkeyed : KeyedBinaryTag.keyed)
        let identity = nextIdentity
        nextIdentity += 1
        open.append(identity << 1 | (isUnkeyed ? 1 : 0))
        return identity
    }

    /// Makes the container at `depth` the innermost open one before it is written to.
    func prepareWrite(at depth: Int, identity: UInt64) {
        closeContainers(downTo: depth + 1)
        precondition(open.count == depth + 1 && open[depth] >> 1 == identity,
                     "KeyedBinaryEncoder: a container was written to after it was finished")
    }

    func writeKey(_ key: some CodingKey) {
        let utf8 = key.stringValue.utf8
        bytes.appendLEB128(UInt64(utf8.count) + 1)
        bytes.append(contentsOf: utf8)
    }

    func writeNil() { bytes.append(KeyedBinaryTag.null) }

    func write(_ value: Bool) { bytes.appendKeyedBinary(value) }

    func write(_ value: String) { bytes.appendKeyedBinary(value) }

    func write(_ value: Double) {
        bytes.append(KeyedBinaryTag.double)
        let pattern = value.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: pattern >> UInt64(shift))) }
    }

    func write(signed value: Int64) { bytes.appendKeyedBinary(signed: value) }

    func write(unsigned value: UInt64) { bytes.appendKeyedBinary(unsigned: value) }
}

/// The `Encoder` handed to one value's `encode(to:)`. `codingPath` is always empty: keeping it
/// would cost an allocation per field on the hot path, and nothing we encode reads it.
struct KeyedBinaryValueEncoder: Encoder {
    let sink: KeyedBinarySink
    /// How many containers were open when this value began; its own container sits at this depth.
    let depth: Int

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let identity = sink.openContainer(at: depth, isUnkeyed: false)
        return KeyedEncodingContainer(KeyedBinaryKeyedEncoder<Key>(sink: sink, depth: depth, identity: identity))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let identity = sink.openContainer(at: depth, isUnkeyed: true)
        return KeyedBinaryUnkeyedEncoder(sink: sink, depth: depth, identity: identity)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        sink.closeContainers(downTo: depth)
        return KeyedBinarySingleValueEncoder(sink: sink, depth: depth)
    }
}

struct KeyedBinaryKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: KeyedBinarySink
    let depth: Int
    let identity: UInt64

    var codingPath: [any CodingKey] { [] }

    private func begin(_ key: Key) {
        sink.prepareWrite(at: depth, identity: identity)
        sink.writeKey(key)
    }

    mutating func encodeNil(forKey key: Key) throws { begin(key); sink.writeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { begin(key); sink.write(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { begin(key); sink.write(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { begin(key); sink.write(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { begin(key); sink.write(Double(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { begin(key); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { begin(key); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { begin(key); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { begin(key); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { begin(key); sink.write(signed: value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { begin(key); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { begin(key); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { begin(key); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { begin(key); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { begin(key); sink.write(unsigned: value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        begin(key)
        try sink.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        begin(key)
        let nested = sink.openContainer(at: depth + 1, isUnkeyed: false)
        return KeyedEncodingContainer(KeyedBinaryKeyedEncoder<NestedKey>(sink: sink, depth: depth + 1, identity: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        begin(key)
        let nested = sink.openContainer(at: depth + 1, isUnkeyed: true)
        return KeyedBinaryUnkeyedEncoder(sink: sink, depth: depth + 1, identity: nested)
    }

    mutating func superEncoder() -> any Encoder {
        preconditionFailure("KeyedBinaryEncoder does not support superEncoder(); journal types are structs and enums")
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        preconditionFailure("KeyedBinaryEncoder does not support superEncoder(forKey:); journal types are structs and enums")
    }
}

struct KeyedBinaryUnkeyedEncoder: UnkeyedEncodingContainer {
    let sink: KeyedBinarySink
    let depth: Int
    let identity: UInt64
    private(set) var count = 0

    init(sink: KeyedBinarySink, depth: Int, identity: UInt64) {
        self.sink = sink
        self.depth = depth
        self.identity = identity
    }

    var codingPath: [any CodingKey] { [] }

    private mutating func begin() {
        sink.prepareWrite(at: depth, identity: identity)
        count += 1
    }

    mutating func encodeNil() throws { begin(); sink.writeNil() }
    mutating func encode(_ value: Bool) throws { begin(); sink.write(value) }
    mutating func encode(_ value: String) throws { begin(); sink.write(value) }
    mutating func encode(_ value: Double) throws { begin(); sink.write(value) }
    mutating func encode(_ value: Float) throws { begin(); sink.write(Double(value)) }
    mutating func encode(_ value: Int) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int8) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int16) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int32) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int64) throws { begin(); sink.write(signed: value) }
    mutating func encode(_ value: UInt) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { begin(); sink.write(unsigned: value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        begin()
        try sink.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        begin()
        let nested = sink.openContainer(at: depth + 1, isUnkeyed: false)
        return KeyedEncodingContainer(KeyedBinaryKeyedEncoder<NestedKey>(sink: sink, depth: depth + 1, identity: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        begin()
        let nested = sink.openContainer(at: depth + 1, isUnkeyed: true)
        return KeyedBinaryUnkeyedEncoder(sink: sink, depth: depth + 1, identity: nested)
    }

    mutating func superEncoder() -> any Encoder {
        preconditionFailure("KeyedBinaryEncoder does not support superEncoder(); journal types are structs and enums")
    }
}

struct KeyedBinarySingleValueEncoder: SingleValueEncodingContainer {
    let sink: KeyedBinarySink
    let depth: Int

    var codingPath: [any CodingKey] { [] }

    private func begin() {
        precondition(sink.depth == depth, "KeyedBinaryEncoder: a single value was written out of order")
    }

    mutating func encodeNil() throws { begin(); sink.writeNil() }
    mutating func encode(_ value: Bool) throws { begin(); sink.write(value) }
    mutating func encode(_ value: String) throws { begin(); sink.write(value) }
    mutating func encode(_ value: Double) throws { begin(); sink.write(value) }
    mutating func encode(_ value: Float) throws { begin(); sink.write(Double(value)) }
    mutating func encode(_ value: Int) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int8) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int16) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int32) throws { begin(); sink.write(signed: Int64(value)) }
    mutating func encode(_ value: Int64) throws { begin(); sink.write(signed: value) }
    mutating func encode(_ value: UInt) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { begin(); sink.write(unsigned: UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { begin(); sink.write(unsigned: value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        begin()
        try sink.encodeValue(value)
    }
}
