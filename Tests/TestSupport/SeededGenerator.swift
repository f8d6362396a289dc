// The one seeded random source for tests: the same codes, keys and jitter on every run, so a
// failure can be replayed. SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", 2014): tiny, fast, and good enough for test data; not for secrets.
// The websocket-frames fuzz target draws its masking keys from it too: scripts/fuzz.sh compiles
// this one file into the target, so it imports nothing.

/// A deterministic `RandomNumberGenerator`: the same seed gives the same sequence.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64 = 0x5EED) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
