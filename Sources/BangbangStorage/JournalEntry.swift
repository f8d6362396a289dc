// What the journal stores: one domain event per record, tagged with the state object that owns
// it (the accounts store, or one board shard). Recovery replays each entry into its owner.
//
// The first byte is a format tag. New records use the keyed binary form (0x02, see
// KeyedBinaryFormat.swift): self-describing like JSON, so an older server's journal stays readable
// after optional fields are added, but written without Foundation on the publish path. Records in
// the original JSON form (0x01) are still read, so existing data directories open unchanged.
import BangbangCore
import Foundation

public enum JournalEntry: Codable, Sendable {
    case account(AccountEvent)
    case order(shard: Int, OrderEvent)

    public static let jsonFormatTag: UInt8 = 0x01
    public static let keyedBinaryFormatTag: UInt8 = 0x02

    public func encoded() -> [UInt8] {
        if case .order(let shard, let event) = self {
            return Self.encodeOrderRecord(shard: shard, event: event)
        }
        return encodedThroughCodable()
    }

    /// The generic path, for account events; with `usesDirectWriters` false, for tests of the
    /// direct writers.
    public func encodedThroughCodable(usesDirectWriters: Bool = true) -> [UInt8] {
        do {
            return try KeyedBinaryEncoder.encode(self, after: Self.keyedBinaryFormatTag, usesDirectWriters: usesDirectWriters)
        } catch {
            fatalError("internal inconsistency in JournalEntry: a domain event failed to encode: \(error)")
        }
    }

    /// The original form, kept for tests that build journals as older servers wrote them.
    public func encodedAsJSON() -> [UInt8] {
        do {
            var bytes: [UInt8] = [Self.jsonFormatTag]
            bytes.append(contentsOf: try JSONEncoder().encode(self))
            return bytes
        } catch {
            fatalError("internal inconsistency in JournalEntry: a domain event failed to encode: \(error)")
        }
    }

    public static func decode(_ bytes: [UInt8]) throws -> JournalEntry {
        switch bytes.first {
        case keyedBinaryFormatTag:
            return try KeyedBinaryDecoder.decode(JournalEntry.self, from: bytes.dropFirst())
        case jsonFormatTag:
            return try JSONDecoder().decode(JournalEntry.self, from: Data(bytes.dropFirst()))
        default:
            throw JournalEntryError(message: "unknown journal entry format \(bytes.first.map(String.init) ?? "empty")")
        }
    }
}

public struct JournalEntryError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    public init(message: String) { self.message = message }
}
