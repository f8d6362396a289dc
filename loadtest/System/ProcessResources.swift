// What the driver learns about processes from the kernel: its own CPU time (so a run can show
// the driver was not the bottleneck), its descriptor limit, and a server's resident memory.
import Foundation
import Glibc

enum ProcessResources {
    struct CPUTime: Sendable {
        var userMicroseconds: Int64
        var systemMicroseconds: Int64
    }

    static var currentProcessID: Int32 { getpid() }

    static func cpuTime() -> CPUTime {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func micro(_ time: timeval) -> Int64 { Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_usec) }
        return CPUTime(userMicroseconds: micro(usage.ru_utime), systemMicroseconds: micro(usage.ru_stime))
    }

    /// CPU time (user + system) of another process in microseconds, from /proc/PID/stat.
    static func cpuMicroseconds(of pid: Int32) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parseCPUMicroseconds(stat: text, ticksPerSecond: Int64(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// utime + stime of a /proc/PID/stat line. The command name (field 2) may contain spaces
    /// and parentheses, so fields are counted from the last ')'.
    static func parseCPUMicroseconds(stat text: String, ticksPerSecond: Int64) -> Int64? {
        guard ticksPerSecond > 0, let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
        return (user + system) * 1_000_000 / ticksPerSecond
    }

    /// Total time the threads of `pid` spent runnable but waiting for a CPU, in microseconds
    /// (second field of /proc/PID/task/TID/schedstat). On a shared machine this shows whether a
    /// process was starved rather than slow. Threads that have exited are not counted.
    static func runQueueWaitMicroseconds(of pid: Int32) -> Int64? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var total: Int64 = 0
        for thread in threads {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8),
                  let wait = parseRunQueueWaitNanoseconds(schedstat: text) else { continue }
            total += wait / 1000
        }
        return total
    }

    /// The wait field of a schedstat line: "run_ns wait_ns timeslices".
    static func parseRunQueueWaitNanoseconds(schedstat text: String) -> Int64? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2 else { return nil }
        return Int64(fields[1])
    }

    /// Raises the soft descriptor limit to the hard one and returns the new soft limit: a
    /// process that holds thousands of sockets needs all it is allowed.
    @discardableResult
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return limit.rlim_cur > UInt(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// Resident set size of `pid` in KiB (VmRSS in /proc/PID/status), or nil if unreadable.
    static func residentKiB(of pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return parseResidentKiB(status: text)
    }

    /// The VmRSS figure of a /proc/PID/status text.
    static func parseResidentKiB(status text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 1, let value = Int(fields[0]) else { return nil }
            if fields.count >= 2, fields[1] == "mB" || fields[1] == "MB" { return value * 1024 }
            return value
        }
        return nil
    }
}

extension FileHandle {
    /// One line on standard error.
    static func standardErrorWrite(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
