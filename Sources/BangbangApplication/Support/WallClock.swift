// The time of day the application stamps changes with, in milliseconds since the Unix epoch.
// A parameter everywhere (`clock:`), so tests run on a clock of their own; this is the real one.
import BangbangCore
import Foundation

public enum WallClock {
    public static let now: @Sendable () -> Timestamp = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Timestamp(rawValue: Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000)
    }
}
