// What the journal stores: one domain event per record, tagged with the state object that owns
// it (the accounts store, or one board shard). Recovery replays each entry into its owner.
//
// Encoding is JSON (the events are Codable): self-describing, so an older server's journal stays
// readable after fields are added, and a corrupt record is visible to a person with `strings`.
// The first byte is a format tag so a later binary encoding can coexist with this one.
import BangbangCore
import Foundation

enum JournalEntry: Codable, Sendable {
    case account(AccountEvent)
    case order(shard: Int, OrderEvent)

    static let jsonFormatTag: UInt8 = 0x01

    func encoded() -> [UInt8] {
        do {
            var bytes: [UInt8] = [Self.jsonFormatTag]
            bytes.append(contentsOf: try JSONEncoder().encode(self))
            return bytes
        } catch {
            fatalError("internal inconsistency in JournalEntry: a domain event failed to encode: \(error)")
        }
    }

    static func decode(_ bytes: [UInt8]) throws -> JournalEntry {
        guard bytes.first == jsonFormatTag else {
            throw JournalEntryError(message: "unknown journal entry format \(bytes.first.map(String.init) ?? "empty")")
        }
        return try JSONDecoder().decode(JournalEntry.self, from: Data(bytes.dropFirst()))
    }
}

struct JournalEntryError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
