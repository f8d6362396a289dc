// A partition's state on its own, so that each partition snapshots and fails over apart: what a
// board partition's owner holds (its shards and its feed numbering) and what an account partition's
// owner holds (the accounts and the personal streams it numbers). One node's snapshot file holds
// both at one cut (`SnapshotContents`, whose format does not change); in a cluster each partition's
// snapshot object holds its own half, covering its own journal, beside what carries its personal
// events over the inbox (kept by the cluster's snapshot object, not here).
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

    enum CodingKeys: String, PartitionHalfCodingKey { case formatVersion, half, shards, boardSequences }

    public func encode(to encoder: any Encoder) throws {
        var container = try Self.headerContainer(encoder)
        try container.encode(shards, forKey: .shards)
        try container.encode(boardSequences, forKey: .boardSequences)
    }

    public init(from decoder: any Decoder) throws {
        let container = try Self.checkedContainer(decoder)
        shards = try container.decode([BoardShard].self, forKey: .shards)
        boardSequences = try container.decode([OrderType: UInt64].self, forKey: .boardSequences)
    }

    public func encoded(expectedSize: Int = 0) throws -> [UInt8] { try encodedHalf(expectedSize: expectedSize) }
    public static func decode(_ bytes: [UInt8]) throws -> Self { try decodeHalf(bytes) }

    init(_ fields: KeyedBinaryReader.SnapshotFields, reader: KeyedBinaryReader) throws {
        self.init(shards: try reader.requireValue(fields.shards, "shards"),
                  boardSequences: try reader.requireValue(fields.boardSequences, "boardSequences"))
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

    enum CodingKeys: String, PartitionHalfCodingKey { case formatVersion, half, accounts, streams }

    public func encode(to encoder: any Encoder) throws {
        var container = try Self.headerContainer(encoder)
        try container.encode(accounts, forKey: .accounts)
        try container.encode(streams.mapValues(StoredStream.init), forKey: .streams)
    }

    public init(from decoder: any Decoder) throws {
        let container = try Self.checkedContainer(decoder)
        accounts = try container.decode(AccountState.self, forKey: .accounts)
        streams = try container.decode([UserID: StoredStream].self, forKey: .streams).mapValues(\.stream)
    }

    public func encoded(expectedSize: Int = 0) throws -> [UInt8] { try encodedHalf(expectedSize: expectedSize) }
    public static func decode(_ bytes: [UInt8]) throws -> Self { try decodeHalf(bytes) }

    init(_ fields: KeyedBinaryReader.SnapshotFields, reader: KeyedBinaryReader) throws {
        self.init(accounts: try reader.requireValue(fields.accounts, "accounts"),
                  streams: try reader.requireValue(fields.streams, "streams"))
    }
}

/// The keys every half begins with.
protocol PartitionHalfCodingKey: CodingKey {
    static var formatVersion: Self { get }
    static var half: Self { get }
}

/// What the two halves share: their header (`formatVersion`, `half`), the keyed binary form and
/// the direct reader.
protocol PartitionHalfReading: Codable {
    associatedtype CodingKeys: PartitionHalfCodingKey
    static var formatVersion: Int { get }
    static var halfName: String { get }
    /// The half from the fields the direct reader found (their header checked).
    init(_ fields: KeyedBinaryReader.SnapshotFields, reader: KeyedBinaryReader) throws
}

extension BoardsPartitionState: PartitionHalfReading {}
extension AccountsPartitionState: PartitionHalfReading {}

extension PartitionHalfReading {
    static func headerContainer(_ encoder: any Encoder) throws -> KeyedEncodingContainer<CodingKeys> {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(halfName, forKey: .half)
        return container
    }

    static func checkedContainer(_ decoder: any Decoder) throws -> KeyedDecodingContainer<CodingKeys> {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try check(container.decode(Int.self, forKey: .formatVersion), container.decode(String.self, forKey: .half))
        return container
    }

    func encodedHalf(expectedSize: Int) throws -> [UInt8] {
        try KeyedBinaryEncoder.encode(self, after: SnapshotContents.keyedBinaryTag, capacity: expectedSize)
    }

    /// Reads `bytes` with the direct reader; a tag other than the keyed binary form's, or bytes
    /// left over, are refused.
    static func decodeHalf(_ bytes: [UInt8]) throws -> Self {
        guard bytes.first == SnapshotContents.keyedBinaryTag else {
            throw JournalEntryError(message: "a partition's snapshot is in no format this server reads "
                                    + "(first byte \(bytes.first.map(String.init) ?? "none"))")
        }
        var reader = KeyedBinaryReader(bytes: bytes.dropFirst())
        let fields = try reader.readSnapshotFields()
        try check(fields.formatVersion, fields.half)
        let state = try Self(fields, reader: reader)
        guard reader.isAtEnd else { throw reader.corrupt("trailing bytes after the partition's state") }
        return state
    }

    static func check(_ version: Int?, _ half: String?) throws {
        guard let half, let version else {
            throw JournalEntryError(message: "not a partition's snapshot (no \(half == nil ? "half" : "formatVersion"))")
        }
        guard half == halfName else {
            throw JournalEntryError(message: "the snapshot holds the \(half) half of a partition's state, not the \(halfName) half")
        }
        guard version == formatVersion else {
            throw JournalEntryError(message: "\(halfName) partition snapshot format \(version) is not supported "
                                    + "(this server reads \(formatVersion))")
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
