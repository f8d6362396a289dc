// One order on its own in the keyed binary form, for stores that keep orders opaquely (the
// order archive): the format tag, then exactly the bytes the journal and snapshots write for an
// order, so every store of orders reads and writes them one way.
import BangbangCore

extension Order {
    /// The order's stored form: the keyed binary tag (0x02), then the order.
    public func storageEncoded() -> [UInt8] {
        do {
            return try KeyedBinaryEncoder.encode(self, after: JournalEntry.keyedBinaryFormatTag)
        } catch {
            fatalError("internal inconsistency in Order.storageEncoded: an order failed to encode: \(error)")
        }
    }

    /// Reads what `storageEncoded()` wrote; a `DecodingError` or `JournalEntryError` for
    /// anything else, never a trap.
    public init(storageEncoded bytes: [UInt8]) throws {
        guard bytes.first == JournalEntry.keyedBinaryFormatTag else {
            throw JournalEntryError(message: "unknown stored order format \(bytes.first.map(String.init) ?? "empty")")
        }
        self = try KeyedBinaryDecoder.decode(Order.self, from: bytes.dropFirst())
        refreshSearchText()
    }
}
