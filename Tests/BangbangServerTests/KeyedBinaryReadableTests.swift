// The keyed binary decoder hands every value whose type reads itself (`KeyedBinaryReadable`) to
// that type's own reader, wherever it stands inside what is decoded: a member, an element, an
// optional. The value decoded at the top is read through Codable, which is how the tests hold the
// two schemas of a type (orders: StoredOrderReaderTests) against each other.
import BangbangCore
import Testing
@testable import BangbangStorage

/// A type whose own reader is told apart from its Codable conformance: it says which one read it.
private struct Marked: Codable, Equatable, KeyedBinaryReadable {
    var value: Int
    var isReadByItsOwnReader = false

    private enum CodingKeys: String, CodingKey { case value }

    static func read(from reader: inout KeyedBinaryReader) throws -> Marked {
        var value: Int?
        try reader.readKeyed(depth: 0) { reader, key in
            guard case "value" = key else { return false }
            value = try reader.readInteger(Int.self)
            return true
        }
        return Marked(value: try reader.requireValue(value, "value"), isReadByItsOwnReader: true)
    }
}

private struct Holder: Codable, Equatable {
    var member: Marked
    var elements: [Marked]
    var optional: Marked?
    var absent: Marked?
}

@Suite struct KeyedBinaryReadableTests {
    @Test func aValueWhoseTypeReadsItselfIsReadByItsOwnReaderWhereverItIsNested() throws {
        let holder = Holder(member: Marked(value: 7), elements: [Marked(value: -1), Marked(value: 2)],
                            optional: Marked(value: 3), absent: nil)
        let bytes = try KeyedBinaryEncoder.encode(holder, after: 0xAA)
        let decoded = try KeyedBinaryDecoder.decode(Holder.self, from: bytes.dropFirst())
        #expect(decoded == Holder(member: Marked(value: 7, isReadByItsOwnReader: true),
                                  elements: [Marked(value: -1, isReadByItsOwnReader: true),
                                             Marked(value: 2, isReadByItsOwnReader: true)],
                                  optional: Marked(value: 3, isReadByItsOwnReader: true), absent: nil))
    }

    @Test func theValueDecodedAtTheTopIsReadThroughCodable() throws {
        let bytes = try KeyedBinaryEncoder.encode(Marked(value: 5), after: 0xAA)
        #expect(try KeyedBinaryDecoder.decode(Marked.self, from: bytes.dropFirst()) == Marked(value: 5))
    }

    /// What its own reader refuses is refused, as the decoder refuses what Codable does.
    @Test func whatItsOwnReaderRefusesIsAnError() throws {
        var writer = KeyedBinaryWriter(header: 0xAA)
        writer.beginKeyed()
        writer.key("member")
        writer.beginKeyed()
        writer.member("value", "not a number")
        writer.endKeyed()
        writer.endKeyed()
        #expect(throws: DecodingError.self) {
            try KeyedBinaryDecoder.decode([String: Marked].self, from: writer.bytes.dropFirst())
        }
    }

    @Test func ordersReadThemselves() {
        #expect((Order.self as Any.Type) is any KeyedBinaryReadable.Type)
    }
}
