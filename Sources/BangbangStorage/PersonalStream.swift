// One user's personal event stream as it is kept and snapshotted: the events still kept, each the
// exact bytes a device was (or will be) sent, and the last number given. PersonalStreams.swift in
// the server appends to it and trims it.
//
// Every user who was ever sent an event has one, for good (the numbering must go on), so it holds
// no more than that. Streams used to be compacted lazily, entries before a `firstIndex` being
// dropped but not yet removed; snapshots of format 1 store streams in that form, and decoding
// one drops those entries, so what is kept is always all of `entries`.
import BangbangCore

public struct PersonalStream: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var sequence: UInt64
        public var at: Timestamp
        public var message: [UInt8]

        public init(sequence: UInt64, at: Timestamp, message: [UInt8]) {
            self.sequence = sequence
            self.at = at
            self.message = message
        }
    }

    public var lastSequence: UInt64 = 0
    /// The events kept, oldest first.
    public var entries: [Entry] = []

    /// The events kept (all of `entries`).
    public var live: ArraySlice<Entry> { entries[...] }

    public init(lastSequence: UInt64 = 0, entries: [Entry] = []) {
        self.lastSequence = lastSequence
        self.entries = entries
    }

    private enum CodingKeys: String, CodingKey {
        case lastSequence, entries, firstIndex
    }

    /// Reads the format-1 form: the entries from `firstIndex` on are the ones kept.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let stored = try container.decode([Entry].self, forKey: .entries)
        let firstIndex = try container.decodeIfPresent(Int.self, forKey: .firstIndex) ?? 0
        guard (0...stored.count).contains(firstIndex) else {
            throw DecodingError.dataCorruptedError(forKey: .firstIndex, in: container,
                                                   debugDescription: "firstIndex \(firstIndex) is outside the \(stored.count) entries")
        }
        self.init(lastSequence: try container.decode(UInt64.self, forKey: .lastSequence),
                  entries: firstIndex == 0 ? stored : Array(stored[firstIndex...]))
    }

    /// Writes the format-1 form, with nothing dropped before `firstIndex`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lastSequence, forKey: .lastSequence)
        try container.encode(entries, forKey: .entries)
        try container.encode(0, forKey: .firstIndex)
    }
}
