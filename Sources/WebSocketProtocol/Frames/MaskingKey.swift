/// The 32-bit masking key of a client frame (RFC 6455 §5.3).
///
/// Stored as the little-endian image of its four wire bytes, so byte `i` of the key is
/// `rawValue >> (8 * i)` on every platform.
public struct MaskingKey: Sendable, Hashable {
    public var rawValue: UInt32

    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Makes a key from the four bytes in wire order.
    @inlinable
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        rawValue = UInt32(b0) | UInt32(b1) << 8 | UInt32(b2) << 16 | UInt32(b3) << 24
    }

    /// Draws a fresh key. RFC 6455 §5.3 asks for an unpredictable key per frame; randomness is a
    /// parameter so tests can be deterministic.
    @inlinable
    public static func random(using generator: inout some RandomNumberGenerator) -> MaskingKey {
        MaskingKey(rawValue: UInt32(truncatingIfNeeded: generator.next()))
    }

    /// The key's byte at wire position `index` (0...3).
    @inlinable
    public subscript(index: Int) -> UInt8 { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt32(index & 3))) }

    /// XORs `buffer` with the key in place, as if the buffer began at payload offset `phase`
    /// (mod 4). Returns the phase for the byte after the buffer, so a payload can be unmasked in
    /// any number of pieces. Masking and unmasking are the same operation.
    ///
    /// Works eight bytes at a time with a key word rotated once for the starting phase; only the
    /// tail (under eight bytes) goes byte by byte, and even that avoids a modulo per byte.
    @discardableResult
    @inlinable
    public func apply(to buffer: UnsafeMutableRawBufferPointer, phase: Int) -> Int {
        let count = buffer.count
        guard count > 0, let base = buffer.baseAddress else { return phase & 3 }
        let shift = UInt32(phase & 3) * 8
        let rotated = shift == 0 ? rawValue : (rawValue >> shift) | (rawValue << (32 - shift))
        let wideKey = UInt64(rotated) | UInt64(rotated) << 32
        var offset = 0
        while offset &+ 8 <= count {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            base.storeBytes(of: (word ^ wideKey).littleEndian, toByteOffset: offset, as: UInt64.self)
            offset &+= 8
        }
        var key = rotated
        while offset < count {
            let byte = base.load(fromByteOffset: offset, as: UInt8.self)
            base.storeBytes(of: byte ^ UInt8(truncatingIfNeeded: key), toByteOffset: offset, as: UInt8.self)
            key = (key >> 8) | (key << 24)
            offset &+= 1
        }
        return (phase &+ count) & 3
    }

    /// Applies the key to `array[range]` in place; see `apply(to:phase:)`.
    @discardableResult
    @inlinable
    public func apply(to array: inout [UInt8], range: Range<Int>, phase: Int) -> Int {
        array.withUnsafeMutableBytes { bytes in
            apply(to: UnsafeMutableRawBufferPointer(rebasing: bytes[range]), phase: phase)
        }
    }
}
