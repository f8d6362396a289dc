import Crypto
import CZlib

/// A record in a segment: `length (u32) | crc32 (u32) | sequence (u64) | payload`, all little-endian.
/// The CRC covers the sequence and the payload, so a record copied to the wrong place, or a stale
/// record with a valid CRC of its own, is still caught by the sequence check.
enum RecordFormat {
    static let headerSize = 16

    /// CRC of the sequence bytes followed by the payload, given the payload's own CRC (computed
    /// before the sequence is known, outside the journal's lock).
    static func checksum(sequence: UInt64, payloadChecksum: UInt32, payloadLength: Int) -> UInt32 {
        let sequenceChecksum = Swift.withUnsafeBytes(of: sequence.littleEndian) { Digest.crc32($0) }
        if payloadLength == 0 { return sequenceChecksum }
        return UInt32(truncatingIfNeeded: crc32_combine(UInt(sequenceChecksum), UInt(payloadChecksum), off_t(payloadLength)))
    }

    static func checksum(sequence: UInt64, payload: UnsafeRawBufferPointer) -> UInt32 {
        let sequenceChecksum = Swift.withUnsafeBytes(of: sequence.littleEndian) { Digest.crc32($0) }
        return Digest.crc32(payload, initial: sequenceChecksum)
    }

    static func append(sequence: UInt64, payload: [UInt8], checksum: UInt32, to buffer: inout [UInt8]) {
        buffer.appendLittleEndian(UInt32(payload.count))
        buffer.appendLittleEndian(checksum)
        buffer.appendLittleEndian(sequence)
        buffer.append(contentsOf: payload)
    }
}

/// The first bytes of every segment: `magic "BBJL" | version (u32) | base sequence (u64)`.
/// The base is the sequence the journal was going to assign next when the segment was created:
/// every record in it is at least the base, and every sequence below it lives in an earlier segment
/// (or belonged to a failed batch).
struct SegmentHeader: Equatable {
    static let magic: [UInt8] = [0x42, 0x42, 0x4A, 0x4C]
    static let currentVersion: UInt32 = 1
    static let size = 16

    var baseSequence: UInt64

    func encoded() -> [UInt8] {
        var bytes = SegmentHeader.magic
        bytes.reserveCapacity(SegmentHeader.size)
        bytes.appendLittleEndian(SegmentHeader.currentVersion)
        bytes.appendLittleEndian(baseSequence)
        return bytes
    }

    enum DecodeFailure: Error, Equatable {
        case tooShort
        case badMagic
        case unsupportedVersion(UInt32)
    }

    static func decode(_ bytes: [UInt8]) -> Result<SegmentHeader, DecodeFailure> {
        guard bytes.count >= size else { return .failure(.tooShort) }
        guard bytes[0..<4].elementsEqual(magic) else { return .failure(.badMagic) }
        let version: UInt32 = bytes.readLittleEndian(at: 4)
        guard version == currentVersion else { return .failure(.unsupportedVersion(version)) }
        return .success(SegmentHeader(baseSequence: bytes.readLittleEndian(at: 8)))
    }

}
