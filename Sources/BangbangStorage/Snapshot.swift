// What a snapshot holds: every owner's state at one consistent cut, plus the numbering of the
// personal streams and board feeds, so sequence numbers continue across restarts.
//
// Encoding is the journal's keyed binary form (a leading 0x02, then `KeyedBinaryEncoder`): keyed,
// so a snapshot stays readable by later versions that add fields, and far cheaper to write and
// read than JSON, which matters with a million orders. Snapshots written as JSON (they start
// with `{`: format versions 1 and 2) are still read. The personal streams' stored messages are
// JSON text already; they are written as strings (since version 2) rather than arrays of bytes.
// The keyed binary form is read by the direct reader (SnapshotReader.swift), the tree decoder
// giving the verdict on anything it refuses.
import BangbangCore
import Foundation

public struct SnapshotContents: Codable, Sendable, Equatable {
    public static let formatVersion = 3
    public static let readableVersions = 1...3
    public static let keyedBinaryTag: UInt8 = 0x02

    public var formatVersion = SnapshotContents.formatVersion
    public var accounts: AccountState
    public var shards: [BoardShard]
    public var streams: [UserID: PersonalStream]
    public var boardSequences: [OrderType: UInt64]

    public init(accounts: AccountState, shards: [BoardShard], streams: [UserID: PersonalStream],
         boardSequences: [OrderType: UInt64]) {
        self.accounts = accounts
        self.shards = shards
        self.streams = streams
        self.boardSequences = boardSequences
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion, accounts, shards, streams, boardSequences
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(accounts, forKey: .accounts)
        try container.encode(shards, forKey: .shards)
        try container.encode(streams.mapValues(StoredStream.init), forKey: .streams)
        try container.encode(boardSequences, forKey: .boardSequences)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        guard Self.readableVersions.contains(formatVersion) else {
            throw JournalEntryError(message: "snapshot format \(formatVersion) is not supported "
                                    + "(this server reads \(Self.readableVersions.lowerBound) to \(Self.readableVersions.upperBound))")
        }
        accounts = try container.decode(AccountState.self, forKey: .accounts)
        shards = try container.decode([BoardShard].self, forKey: .shards)
        if formatVersion == 1 {
            streams = try container.decode([UserID: PersonalStream].self, forKey: .streams)
        } else {
            streams = try container.decode([UserID: StoredStream].self, forKey: .streams).mapValues(\.stream)
        }
        boardSequences = try container.decode([OrderType: UInt64].self, forKey: .boardSequences)
        formatVersion = Self.formatVersion
    }

    /// `expectedSize`: about how many bytes it will take (the previous snapshot's size), reserved
    /// up front.
    public func encoded(expectedSize: Int = 0) throws -> [UInt8] {
        try KeyedBinaryEncoder.encode(self, after: Self.keyedBinaryTag, capacity: expectedSize)
    }

    /// The form versions 1 and 2 were written in; kept so tests can make such snapshots.
    public func encodedAsJSON() throws -> [UInt8] {
        var copy = self
        copy.formatVersion = 2
        return Array(try JSONEncoder().encode(copy))
    }

    /// The generic path for the keyed binary form: a tree of the whole snapshot, then Codable.
    static func decodeThroughTree(_ bytes: [UInt8]) throws -> SnapshotContents {
        try KeyedBinaryDecoder.decode(SnapshotContents.self, from: bytes.dropFirst())
    }

    public static func decode(_ bytes: [UInt8]) throws -> SnapshotContents {
        switch bytes.first {
        case keyedBinaryTag:
            // The direct reader (SnapshotReader.swift); what it refuses or does not read is left
            // to the tree decoder, which then reads it or gives its own error.
            var reader = KeyedBinaryReader(bytes: bytes.dropFirst())
            if let contents = try? reader.readSnapshot(), reader.isAtEnd { return contents }
            return try decodeThroughTree(bytes)
        case UInt8(ascii: "{"):
            return try JSONDecoder().decode(SnapshotContents.self, from: Data(bytes))
        default:
            throw JournalEntryError(message: "the snapshot is in no format this server reads "
                                    + "(first byte \(bytes.first.map(String.init) ?? "none"))")
        }
    }
}

/// A personal stream as snapshots store it (since format 2): only the entries still live, each
/// message as text.
struct StoredStream: Codable {
    struct Entry: Codable {
        var sequence: UInt64
        var at: Timestamp
        var message: String
    }

    var lastSequence: UInt64
    var entries: [Entry]

    init(_ stream: PersonalStream) {
        lastSequence = stream.lastSequence
        entries = stream.live.map { Entry(sequence: $0.sequence, at: $0.at, message: String(decoding: $0.message, as: UTF8.self)) }
    }

    var stream: PersonalStream {
        PersonalStream(lastSequence: lastSequence, entries: entries.map {
            PersonalStream.Entry(sequence: $0.sequence, at: $0.at, message: Array($0.message.utf8))
        })
    }
}
