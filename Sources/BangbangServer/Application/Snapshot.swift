// What a snapshot holds: every owner's state at one consistent cut, plus the numbering of the
// personal streams and board feeds, so sequence numbers continue across restarts.
//
// Encoding is JSON, like the journal's entries, so a snapshot stays readable by later versions
// that add fields. The personal streams' stored messages are JSON text already; they are written
// as strings (version 2) rather than arrays of byte values (version 1, still read), which made
// them about four times larger and most of the encoding time.
import BangbangCore
import Foundation

struct SnapshotContents: Codable, Sendable {
    static let formatVersion = 2
    static let readableVersions = 1...2

    var formatVersion = SnapshotContents.formatVersion
    var accounts: AccountState
    var shards: [BoardShard]
    var streams: [UserID: PersonalStreams.Stream]
    var boardSequences: [OrderType: UInt64]

    init(accounts: AccountState, shards: [BoardShard], streams: [UserID: PersonalStreams.Stream],
         boardSequences: [OrderType: UInt64]) {
        self.accounts = accounts
        self.shards = shards
        self.streams = streams
        self.boardSequences = boardSequences
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion, accounts, shards, streams, boardSequences
    }

    /// A personal stream as stored: only the entries still live, each message as text.
    private struct StoredStream: Codable {
        var lastSequence: UInt64
        var entries: [StoredEntry]
    }

    private struct StoredEntry: Codable {
        var sequence: UInt64
        var at: Timestamp
        var message: String
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(accounts, forKey: .accounts)
        try container.encode(shards, forKey: .shards)
        try container.encode(streams.mapValues { stream in
            StoredStream(lastSequence: stream.lastSequence, entries: stream.live.map {
                StoredEntry(sequence: $0.sequence, at: $0.at, message: String(decoding: $0.message, as: UTF8.self))
            })
        }, forKey: .streams)
        try container.encode(boardSequences, forKey: .boardSequences)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(Int.self, forKey: .formatVersion)
        guard Self.readableVersions.contains(formatVersion) else {
            throw JournalEntryError(message: "snapshot format \(formatVersion) is not supported "
                                    + "(this server reads \(Self.readableVersions.lowerBound) to \(Self.readableVersions.upperBound))")
        }
        accounts = try container.decode(AccountState.self, forKey: .accounts)
        shards = try container.decode([BoardShard].self, forKey: .shards)
        if formatVersion == 1 {
            streams = try container.decode([UserID: PersonalStreams.Stream].self, forKey: .streams)
        } else {
            streams = try container.decode([UserID: StoredStream].self, forKey: .streams).mapValues { stored in
                PersonalStreams.Stream(lastSequence: stored.lastSequence, entries: stored.entries.map {
                    PersonalStreams.Entry(sequence: $0.sequence, at: $0.at, message: Array($0.message.utf8))
                })
            }
        }
        boardSequences = try container.decode([OrderType: UInt64].self, forKey: .boardSequences)
        formatVersion = Self.formatVersion
    }

    func encoded() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }

    static func decode(_ bytes: [UInt8]) throws -> SnapshotContents {
        try JSONDecoder().decode(SnapshotContents.self, from: Data(bytes))
    }
}
