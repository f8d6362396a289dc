// Little-endian fixed-width fields, appended to and read from byte arrays without intermediate copies.

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// Caller guarantees `offset + MemoryLayout<T>.size <= count`.
    func readLittleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }
}
