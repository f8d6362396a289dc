// Every system call the journal and the transport make goes through a `Syscalls` value (address
// parsing and name resolution, which change nothing, stay with the transport), for three
// reasons: EINTR is retried in one place instead of at every call site; a failure comes back as a
// typed `Errno`; and a test can force the failures that matter (ENOSPC and EIO from a write or an
// fsync, EMFILE from accept, EAGAIN and short transfers on a socket) without a full disk, a broken
// drive or a misbehaving kernel.
//
// Faults are per instance: a journal takes its `Syscalls` in its configuration, a server and its
// event loops in theirs, each defaulting to `.live`. There is no process-wide hook. The rule is
// checked in every build, so a release binary can still simulate a full disk for end-to-end
// tests; `.live` has no rule and pays one nil check per call.
//
// The calls are grouped by what they touch: files (Syscalls+Files.swift), sockets
// (Syscalls+Sockets.swift), and readiness and time (Syscalls+Readiness.swift).
import Glibc

/// The door to the operating system, optionally with a fault rule in front of it.
public struct Syscalls: Sendable {
    /// Decides, for each call of a kind, whether to inject a fault (nil lets the call through).
    /// It may be consulted from any thread, so it must be safe to call concurrently.
    public typealias FaultRule = @Sendable (SystemCall) -> InjectedFault?

    /// The real calls, with no faults.
    public static let live = Syscalls()

    private let faultRule: FaultRule?

    /// A layer whose calls consult `faultRule` first; without one, the real thing.
    public init(injectingFaults faultRule: FaultRule? = nil) {
        self.faultRule = faultRule
    }

    /// Whether this layer injects faults at all.
    public var injectsFaults: Bool { faultRule != nil }

    @inline(__always)
    func injectedFault(_ call: SystemCall) -> InjectedFault? {
        faultRule?(call)
    }

    @inline(__always)
    func failIfInjected(_ call: SystemCall) throws(Errno) {
        if case .fail(let error)? = injectedFault(call) { throw error }
    }

    /// Runs `body` until it returns something other than -1 with EINTR; any other negative
    /// return becomes the errno it left.
    @inline(__always)
    func retryingInterrupts(_ body: () -> Int) throws(Errno) -> Int {
        while true {
            let result = body()
            if result >= 0 { return result }
            let error = Errno.current
            if error != .interrupted { throw error }
        }
    }

    /// Closes without retrying: on Linux the descriptor is gone even when close reports EINTR,
    /// and a retry could close a descriptor another thread has just been given.
    public func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }
}
