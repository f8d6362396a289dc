// One order on its own, in the keyed binary form (tag 0x02, as journal records): the bytes the
// order archive keeps opaque in its `encoded` column. Written by the direct writer and read back
// by the direct reader (StoredOrderReader.swift), since history pages decode every order they show.
import BangbangCore

public enum StoredOrder {
    public static let keyedBinaryFormatTag: UInt8 = 0x02

    public static func encoded(_ order: Order) -> [UInt8] {
        var writer = KeyedBinaryWriter(header: keyedBinaryFormatTag)
        writer.write(order)
        return writer.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws -> Order {
        guard bytes.first == keyedBinaryFormatTag else {
            throw JournalEntryError(message: "unknown stored order format \(bytes.first.map(String.init) ?? "empty")")
        }
        var reader = KeyedBinaryReader(bytes: bytes.dropFirst())
        let order = try reader.readOrder(depth: 0)
        guard reader.isAtEnd else { throw reader.corrupt("trailing bytes after the value") }
        return order
    }
}
