// What a partition's snapshot stores of its outbox and of its inbox reader, as opaque bytes the
// snapshot embeds. Big-endian, sorted keys, so one state has one encoding; every count and length
// is checked against what remains, and anything inconsistent is refused rather than restored.
//
//   outbox: "BO" | version 1 | partitions u16 | (index u16 | next u64 | pending u32 | entry*)*
//           (an entry as in a message, InboxCodec.swift)
//   reader: "BN" | version 1 | position u64 | sources u32 | (space u8 | index u16 | applied u64)*

public enum InboxStateCodec {
    static let outboxMagic: [UInt8] = [0x42, 0x4F]   // "BO"
    static let readerMagic: [UInt8] = [0x42, 0x4E]   // "BN"
    static let version: UInt8 = 1

    public static func encode(_ state: InboxOutbox.State) -> [UInt8] {
        var bytes = outboxMagic + [version]
        InboxCodec.append(UInt16(state.destinations.count), to: &bytes)
        for (index, destination) in state.destinations.sorted(by: { $0.key < $1.key }) {
            InboxCodec.append(index, to: &bytes)
            InboxCodec.append(destination.nextSequence, to: &bytes)
            InboxCodec.append(UInt32(destination.pending.count), to: &bytes)
            for entry in destination.pending { InboxCodec.append(entry, to: &bytes) }
        }
        return bytes
    }

    /// An outbox's state: every partition's pending entries numbered consecutively below its next
    /// number.
    public static func decodeOutbox(_ bytes: ArraySlice<UInt8>) throws(InboxProtocolError) -> InboxOutbox.State {
        var reader = Reader(bytes: bytes)
        try readHeader(outboxMagic, from: &reader)
        let count = Int(try reader.integer(UInt16.self))
        var state = InboxOutbox.State()
        var previousIndex: UInt16?
        for _ in 0..<count {
            let index = try reader.integer(UInt16.self)
            guard previousIndex.map({ index > $0 }) ?? true else { throw .inconsistentState }
            previousIndex = index
            let next = try reader.integer(UInt64.self)
            let pendingCount = Int(try reader.integer(UInt32.self))
            guard pendingCount <= reader.remaining / (InboxCodec.entryHeaderSize + InboxCodec.smallestEventSize) else {
                throw .truncated
            }
            var pending: [InboxEntry] = []
            for _ in 0..<pendingCount { pending.append(try InboxCodec.readEntry(from: &reader)) }
            // Wrapping additions: a sequence of UInt64.max is refused, not trapped on (decoding
            // refuses 0, and `next` must leave room to number one more).
            guard next > 0, next < .max,
                  pending.last.map({ $0.outboxSequence &+ 1 == next }) ?? true,
                  zip(pending, pending.dropFirst()).allSatisfy({ $0.outboxSequence &+ 1 == $1.outboxSequence }) else {
                throw .inconsistentState
            }
            state.destinations[index] = .init(nextSequence: next, pending: pending)
        }
        guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
        return state
    }

    public static func encode(_ state: InboxReader.State) -> [UInt8] {
        var bytes = readerMagic + [version]
        InboxCodec.append(state.position, to: &bytes)
        InboxCodec.append(UInt32(state.applied.count), to: &bytes)
        for (source, applied) in state.applied.sorted(by: { $0.key < $1.key }) {
            bytes.append(source.space.rawValue)
            InboxCodec.append(source.index, to: &bytes)
            InboxCodec.append(applied, to: &bytes)
        }
        return bytes
    }

    public static func decodeReader(_ bytes: ArraySlice<UInt8>) throws(InboxProtocolError) -> InboxReader.State {
        var reader = Reader(bytes: bytes)
        try readHeader(readerMagic, from: &reader)
        var state = InboxReader.State(position: try reader.integer(UInt64.self))
        let count = Int(try reader.integer(UInt32.self))
        guard count <= reader.remaining / 11 else { throw .truncated }
        var previous: InboxSource?
        for _ in 0..<count {
            let spaceByte = try reader.byte()
            guard let space = InboxSource.Space(rawValue: spaceByte) else { throw .unknownSpace(spaceByte) }
            let source = InboxSource(space: space, index: try reader.integer(UInt16.self))
            guard previous.map({ source > $0 }) ?? true else { throw .inconsistentState }
            previous = source
            let applied = try reader.integer(UInt64.self)
            guard applied > 0 else { throw .inconsistentState }
            state.applied[source] = applied
        }
        guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
        return state
    }

    private static func readHeader(_ magic: [UInt8], from reader: inout Reader) throws(InboxProtocolError) {
        guard try reader.bytes(2).elementsEqual(magic) else { throw .badMagic }
        let version = try reader.byte()
        guard version == Self.version else { throw .unsupportedVersion(version) }
    }
}
