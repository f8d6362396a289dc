/// Reads the records of one segment's bytes (header already checked) and says where, if anywhere,
/// they stop making sense. Pure: recovery decides what the damage means, this only describes it.
struct SegmentScan {
    struct Damage: Equatable {
        enum Kind: Equatable {
            /// Fewer bytes than a record header remain.
            case shortHeader(available: Int)
            /// The header promises more payload than the file holds.
            case shortPayload(available: Int, expected: Int)
            /// The length field exceeds the configured maximum record size.
            case implausibleLength(Int)
            case checksumMismatch
            /// A record with a valid checksum whose sequence does not follow its predecessor.
            case sequenceOutOfOrder(found: UInt64, previous: UInt64)
        }
        var offset: Int
        var kind: Kind
        /// Whether an intact record (valid checksum, later sequence) appears anywhere after the
        /// damage: if so the damage is not a torn tail but a hole in acknowledged history.
        var isFollowedByValidRecords: Bool

        var summary: String {
            switch kind {
            case .shortHeader(let available):
                return "incomplete record header (\(available) of \(RecordFormat.headerSize) bytes)"
            case .shortPayload(let available, let expected):
                return "incomplete record payload (\(available) of \(expected) bytes)"
            case .implausibleLength(let length):
                return "record length \(length) exceeds the maximum record size"
            case .checksumMismatch:
                return "record checksum mismatch"
            case .sequenceOutOfOrder(let found, let previous):
                return "record sequence \(found) does not follow \(previous)"
            }
        }
    }

    /// Sequence and payload range of each intact record, in file order.
    var records: [(sequence: UInt64, payload: Range<Int>)] = []
    /// The offset just past the last intact record.
    var validLength: Int
    var damage: Damage?
    /// Bytes of zeros after the last record: space the writer filled ahead (`preallocationSize`),
    /// not damage.
    var zeroTail = 0

    var lastSequence: UInt64? { records.last?.sequence }

    /// Scans `bytes` from `SegmentHeader.size`. `previousSequence` is the last sequence of the
    /// earlier segments (or base - 1), so sequences must keep increasing across files.
    init(bytes: [UInt8], previousSequence: UInt64, maximumRecordSize: Int) {
        validLength = SegmentHeader.size
        var offset = SegmentHeader.size
        var previous = previousSequence
        while offset < bytes.count {
            // Zeros from a record boundary to the end: the preallocated rest of the segment.
            // (No record starts with zeros throughout: its checksum and sequence are not zero.)
            if bytes[offset] == 0, Self.isZero(bytes, from: offset) {
                zeroTail = bytes.count - offset
                return
            }
            let remaining = bytes.count - offset
            if remaining < RecordFormat.headerSize {
                damage = Damage(offset: offset, kind: .shortHeader(available: remaining), isFollowedByValidRecords: false)
                return
            }
            let length = Int(bytes.readLittleEndian(at: offset, as: UInt32.self))
            if length > maximumRecordSize {
                damage = Self.damage(at: offset, .implausibleLength(length), in: bytes, after: previous, maximumRecordSize)
                return
            }
            if remaining - RecordFormat.headerSize < length {
                damage = Self.damage(at: offset, .shortPayload(available: remaining - RecordFormat.headerSize, expected: length),
                                     in: bytes, after: previous, maximumRecordSize)
                return
            }
            guard Self.isIntact(bytes, at: offset, length: length) else {
                damage = Self.damage(at: offset, .checksumMismatch, in: bytes, after: previous, maximumRecordSize)
                return
            }
            let sequence = bytes.readLittleEndian(at: offset + 8, as: UInt64.self)
            guard sequence > previous else {
                damage = Self.damage(at: offset, .sequenceOutOfOrder(found: sequence, previous: previous),
                                     in: bytes, after: previous, maximumRecordSize)
                return
            }
            let payloadStart = offset + RecordFormat.headerSize
            records.append((sequence, payloadStart..<payloadStart + length))
            previous = sequence
            offset = payloadStart + length
            validLength = offset
        }
    }

    private static func isZero(_ bytes: [UInt8], from start: Int) -> Bool {
        bytes.withUnsafeBytes { raw in
            var position = start
            while position < raw.count {
                if raw[position] != 0 { return false }
                position += 1
            }
            return true
        }
    }

    private static func isIntact(_ bytes: [UInt8], at offset: Int, length: Int) -> Bool {
        let stored = bytes.readLittleEndian(at: offset + 4, as: UInt32.self)
        let sequence = bytes.readLittleEndian(at: offset + 8, as: UInt64.self)
        let payloadStart = offset + RecordFormat.headerSize
        let computed = bytes.withUnsafeBytes { raw in
            RecordFormat.checksum(sequence: sequence, payload: UnsafeRawBufferPointer(rebasing: raw[payloadStart..<payloadStart + length]))
        }
        return stored == computed
    }

    private static func damage(at offset: Int, _ kind: Damage.Kind, in bytes: [UInt8], after previous: UInt64,
                               _ maximumRecordSize: Int) -> Damage {
        Damage(offset: offset, kind: kind,
               isFollowedByValidRecords: containsIntactRecord(bytes, from: offset + 1, after: previous, maximumRecordSize))
    }

    /// Looks for an intact record starting at any byte from `start` on. A torn write leaves garbage
    /// or zeros, which fail the cheap length and sequence checks long before a checksum is computed,
    /// so this is linear in practice; it only runs when a segment is already damaged.
    static func containsIntactRecord(_ bytes: [UInt8], from start: Int, after previous: UInt64,
                                     _ maximumRecordSize: Int) -> Bool {
        var offset = start
        while offset + RecordFormat.headerSize <= bytes.count {
            defer { offset += 1 }
            let length = Int(bytes.readLittleEndian(at: offset, as: UInt32.self))
            guard length <= maximumRecordSize, length <= bytes.count - offset - RecordFormat.headerSize else { continue }
            let sequence = bytes.readLittleEndian(at: offset + 8, as: UInt64.self)
            // Sequences grow by one per append; a candidate absurdly far ahead is noise.
            guard sequence > previous, sequence - previous < 1 << 40 else { continue }
            if isIntact(bytes, at: offset, length: length) { return true }
        }
        return false
    }
}
