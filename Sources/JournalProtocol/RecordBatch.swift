// Several journal records in one stream message. Every stream message costs the NATS servers the
// same (a quorum of three stores and acknowledges it), whatever it holds, so an owner publishes
// what its committers handed over during one turn of its loop as one message: a burst of commits is
// one replication, not one each.
//
// The records keep numbers of their own, one per record, the same after any replay (the inbox and
// the snapshots count in them): the message's header `Bb-Records` holds the number of its first
// record, and the payload is the count of records, then each record as its length and its bytes
// (every number 4 bytes, big-endian); a count that does not match is refused. A message
// without the header is one record numbered by its stream sequence, as every record was stored
// before batches; the two agree until a stream's first batch, after which every message has one.
// Sans-I/O, no imports, fuzzed (`fuzz/record-batch`): bytes in, records out, every length checked
// against what remains.

public enum RecordBatch {
    /// The header naming a batch's first record number.
    public static let firstRecordHeader = "Bb-Records"

    /// At most this many payload bytes go into one message (a record bigger than that goes alone):
    /// a message is read back in base64 inside JSON, which must fit NATS's 1 MiB payload.
    public static let maximumBytes = 256 * 1024

    public static func encode(_ records: some Collection<[UInt8]>) -> [UInt8] {
        var bytes = payloadHeader(count: records.count)
        bytes.reserveCapacity(4 + records.reduce(0) { $0 + encodedSize(of: $1) })
        for record in records { append(record, to: &bytes) }
        return bytes
    }

    /// The start of a payload of `count` records, each then added with `append`.
    public static func payloadHeader(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        appendNumber(count, to: &bytes)
        return bytes
    }

    /// Appends one record's length and bytes to a payload being built.
    public static func append(_ record: [UInt8], to bytes: inout [UInt8]) {
        appendNumber(record.count, to: &bytes)
        bytes += record
    }

    private static func appendNumber(_ number: Int, to bytes: inout [UInt8]) {
        precondition(number >= 0 && number <= Int(UInt32.max), "a journal record, and a batch's count, fit in 32 bits")
        for shift in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: number >> shift)) }
    }

    /// What one record adds to a payload.
    public static func encodedSize(of record: [UInt8]) -> Int { 4 + record.count }

    /// The records of a batch's payload, in order; nil unless the payload is exactly its count of
    /// records, at least one.
    public static func decode(_ bytes: [UInt8]) -> [[UInt8]]? {
        func number(at offset: Int) -> Int {
            Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        }
        guard bytes.count >= 4 else { return nil }
        let count = number(at: 0)
        // Each record takes at least its length: a count the bytes cannot hold is refused unread.
        guard count >= 1, count <= (bytes.count - 4) / 4 else { return nil }
        var records: [[UInt8]] = []
        records.reserveCapacity(count)
        var offset = 4
        while records.count < count {
            guard bytes.count - offset >= 4 else { return nil }
            let length = number(at: offset)
            offset += 4
            guard bytes.count - offset >= length else { return nil }
            records.append(Array(bytes[offset..<(offset + length)]))
            offset += length
        }
        return offset == bytes.count ? records : nil
    }

    /// A header value's first record number: decimal digits as `String(number)` writes them (no
    /// sign, no leading zero), at least 1.
    public static func firstRecord(fromHeader value: String) -> UInt64? {
        guard let lead = value.utf8.first, lead != 0x30, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let number = UInt64(value), number >= 1 else {
            return nil
        }
        return number
    }
}
