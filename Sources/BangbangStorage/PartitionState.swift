// A partition's state on its own (docs/scale-out.md, sections 4 and 7b): what a board
// partition's owner holds (its shards and its feed numbering) and what an account partition's
// owner holds (the accounts and the personal streams it numbers). One node's snapshot file holds
// both at one cut (`SnapshotContents`, whose format does not change); in a cluster each
// partition's snapshot object holds its own half, covering its own journal, beside what carries
// its personal events over the inbox (kept by the cluster's snapshot object, not here).
//
// Each half is written in the keyed binary form with the keys `SnapshotContents` uses for the
// same fields, and a `half` naming which it is, so one reader serves all three
// (SnapshotReader.swift) and a half is never read as the other.
import BangbangCore

public struct BoardsPartitionState: Codable, Sendable, Equatable {
    public static let formatVersion = 1
    static let halfName = "boards"

    public var shards: [BoardShard]
    public var boardSequences: [OrderType: UInt64]

    public init(shards: [BoardShard], boardSequences: [OrderType: UInt64]) {
        self.shards = shards
        self.boardSequences = boardSequences
    }

    private enum CodingKeys: String, CodingKey { case formatVersion, half, shards, boardSequences }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .formatVersion)
        try container.encode(Self.halfName, forKey: .half)
        try container.encode(shards, forKey: .shards)
        try container.encode(boardSequences, forKey: .boardSequences)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try PartitionHalf.check(container.decode(Int.self, forKey: .formatVersion), container.decode(String.self, forKey: .half),
                                expecting: Self.halfName, readable: Self.formatVersion)
        shards = try container.decode([BoardShard].self, forKey: .shards)
        boardSequences = try container.decode([OrderType: UInt64].self, forKey: .boardSequences)
    }

    public func encoded(expectedSize: Int = 0) throws -> [UInt8] {
        try KeyedBinaryEncoder.encode(self, after: SnapshotContents.keyedBinaryTag, capacity: expectedSize)
    }

    public static func decode(_ bytes: [UInt8]) throws -> BoardsPartitionState {
        try PartitionHalf.decode(bytes) { reader in
            let fields = try reader.readSnapshotFields()
            try PartitionHalf.check(fields.formatVersion, fields.half, expecting: halfName, readable: formatVersion)
            return BoardsPartitionState(shards: try reader.requireValue(fields.shards, "shards"),
                                        boardSequences: try reader.requireValue(fields.boardSequences, "boardSequences"))
        }
    }
}

public struct AccountsPartitionState: Codable, Sendable, Equatable {
    public static let formatVersion = 1
    static let halfName = "accounts"

    public var accounts: AccountState
    public var streams: [UserID: PersonalStream]

    public init(accounts: AccountState, streams: [UserID: PersonalStream]) {
        self.accounts = accounts
        self.streams = streams
    }

    private enum CodingKeys: String, CodingKey { case formatVersion, half, accounts, streams }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatVersion, forKey: .formatVersion)
        try container.encode(Self.halfName, forKey: .half)
        try container.encode(accounts, forKey: .accounts)
        try container.encode(streams.mapValues(StoredStream.init), forKey: .streams)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try PartitionHalf.check(container.decode(Int.self, forKey: .formatVersion), container.decode(String.self, forKey: .half),
                                expecting: Self.halfName, readable: Self.formatVersion)
        accounts = try container.decode(AccountState.self, forKey: .accounts)
        streams = try container.decode([UserID: StoredStream].self, forKey: .streams).mapValues(\.stream)
    }

    public func encoded(expectedSize: Int = 0) throws -> [UInt8] {
        try KeyedBinaryEncoder.encode(self, after: SnapshotContents.keyedBinaryTag, capacity: expectedSize)
    }

    public static func decode(_ bytes: [UInt8]) throws -> AccountsPartitionState {
        try PartitionHalf.decode(bytes) { reader in
            let fields = try reader.readSnapshotFields()
            try PartitionHalf.check(fields.formatVersion, fields.half, expecting: halfName, readable: formatVersion)
            return AccountsPartitionState(accounts: try reader.requireValue(fields.accounts, "accounts"),
                                          streams: try reader.requireValue(fields.streams, "streams"))
        }
    }
}

extension SnapshotContents {
    /// Both halves at one cut, as one node's snapshot file holds them.
    public init(boards: BoardsPartitionState, accounts: AccountsPartitionState) {
        self.init(accounts: accounts.accounts, shards: boards.shards, streams: accounts.streams,
                  boardSequences: boards.boardSequences)
    }

    public var boardsPartition: BoardsPartitionState {
        BoardsPartitionState(shards: shards, boardSequences: boardSequences)
    }

    public var accountsPartition: AccountsPartitionState {
        AccountsPartitionState(accounts: accounts, streams: streams)
    }
}

/// What the two halves share in reading.
enum PartitionHalf {
    static func check(_ formatVersion: Int?, _ half: String?, expecting expected: String, readable: Int) throws {
        guard let half, let formatVersion else {
            throw JournalEntryError(message: "not a partition's snapshot (no \(half == nil ? "half" : "formatVersion"))")
        }
        guard half == expected else {
            throw JournalEntryError(message: "the snapshot holds the \(half) half of a partition's state, not the \(expected) half")
        }
        guard formatVersion == readable else {
            throw JournalEntryError(message: "\(expected) partition snapshot format \(formatVersion) is not supported "
                                    + "(this server reads \(readable))")
        }
    }

    /// Reads `bytes` with the direct reader; a tag other than the keyed binary form's, or bytes
    /// left over, are refused.
    static func decode<State>(_ bytes: [UInt8], _ read: (inout KeyedBinaryReader) throws -> State) throws -> State {
        guard bytes.first == SnapshotContents.keyedBinaryTag else {
            throw JournalEntryError(message: "a partition's snapshot is in no format this server reads "
                                    + "(first byte \(bytes.first.map(String.init) ?? "none"))")
        }
        var reader = KeyedBinaryReader(bytes: bytes.dropFirst())
        let state = try read(&reader)
        guard reader.isAtEnd else { throw reader.corrupt("trailing bytes after the partition's state") }
        return state
    }
}
