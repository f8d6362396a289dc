// Damaged copies of encoded bytes, for the tests that hold a reader to "read exactly or refuse,
// never trap": one to a few bytes set to random values, drawn from the test's seeded generator so
// a failing copy can be made again.

extension SeededGenerator {
    /// `bytes` with 1 to `changes` bytes at `offset` or later set to random values (a byte may be
    /// drawn twice, or keep its value).
    public mutating func damaged(_ bytes: [UInt8], changes: Int = 3, from offset: Int = 0) -> [UInt8] {
        var copy = bytes
        for _ in 0..<Int.random(in: 1...changes, using: &self) {
            copy[Int.random(in: offset..<copy.count, using: &self)] = UInt8.random(in: 0...255, using: &self)
        }
        return copy
    }
}
