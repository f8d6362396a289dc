// One user's personal event stream as it is kept and snapshotted: the events still kept, each the
// exact bytes a device was (or will be) sent, and the last number given. PersonalStreams.swift in
// the server appends to it and trims it.
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
    public var entries: [Entry] = []
    /// Entries before this index are dropped (compacted lazily).
    public var firstIndex = 0

    public var live: ArraySlice<Entry> { entries[firstIndex...] }

    public init(lastSequence: UInt64 = 0, entries: [Entry] = []) {
        self.lastSequence = lastSequence
        self.entries = entries
    }
}
