// The driver's one clock: CLOCK_MONOTONIC in nanoseconds. It is system-wide, so a timestamp
// written into a message by one process can be compared with the clock of another process on
// the same machine (publish→delivery latency across driver processes).
import Glibc

enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// xorshift64*: masking keys and jitter for the driver. Not cryptographic, and it need not be:
/// a load generator only has to produce well-formed frames, and drawing keys from the kernel
/// would cost a system call per message.
struct FastRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed
    }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
