// Readiness (epoll) and the monotonic clock: what an event loop needs to learn which sockets
// can move bytes, and to time its deadlines.
import CLinux
import Glibc

extension Syscalls {
    public func pollCreate() throws(Errno) -> Int32 {
        let descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        if descriptor < 0 { throw Errno.current }
        return descriptor
    }

    /// Adds (`EPOLL_CTL_ADD`) or changes (`EPOLL_CTL_MOD`) `descriptor`'s interest set; `token`
    /// comes back with its events.
    public func pollControl(_ poll: Int32, _ operation: Int32, _ descriptor: Int32, events: UInt32, token: UInt64) throws(Errno) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        if epoll_ctl(poll, operation, descriptor, &event) != 0 { throw Errno.current }
    }

    public func pollRemove(_ poll: Int32, _ descriptor: Int32) {
        var unused = epoll_event()
        _ = epoll_ctl(poll, Int32(EPOLL_CTL_DEL), descriptor, &unused)
    }

    /// Ready descriptors now, without waiting; 0 when none (or on EINTR, which the next turn
    /// retries).
    public func pollReady(_ poll: Int32, into events: UnsafeMutablePointer<epoll_event>, capacity: Int32) -> Int {
        max(0, Int(epoll_wait(poll, events, capacity, 0)))
    }

    /// CLOCK_MONOTONIC in milliseconds: never jumps with wall-clock changes.
    public static func monotonicMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
