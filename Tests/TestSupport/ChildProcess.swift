// A child process that the tests start and reap themselves, by PID: `posix_spawn`, output to a
// file, `waitpid` on that PID only. Foundation's `Process` reaps its children through a
// process-wide SIGCHLD watcher shared with everything else in the test process; under the
// parallel tests a child killed there was once never seen to exit, and a test waiting for it
// (on one of the two threads of the concurrency pool) hung the whole run. Nothing here depends
// on a signal being noticed.
import Glibc
import Synchronization

public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The wait status, once reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`, standard output and error appended to `logPath`,
    /// the environment inherited.
    public init(executable: String, arguments: [String], logPath: String) throws(ChildProcessError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process leaks into the child: not the tests' sockets, not
        // the descriptors by which Foundation notices its own children's exits (a child holding
        // one would keep that exit from being seen until it exits too).
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        // The child starts with no signal blocked and every signal at its default: the thread
        // that spawns it may be a Dispatch worker, which blocks signals, and the test process may
        // ignore some (SIGPIPE); both would otherwise pass through exec.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw ChildProcessError(executable: executable, code: result) }
        pid = child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the Glibc module does not
    /// declare.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// Whether the child is still running (reaps it if it has exited).
    public var isRunning: Bool { exitStatus(blocking: false) == nil }

    public func signal(_ number: Int32) {
        if isRunning { _ = kill(pid, number) }
    }

    /// Waits for the child to exit and returns its wait status.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        exitStatus(blocking: true) ?? 0
    }

    /// The wait status once the child has exited; reaps it the first time.
    private func exitStatus(blocking: Bool) -> Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            while true {
                let reaped = waitpid(pid, &raw, blocking ? 0 : WNOHANG)
                if reaped == pid { status = raw; return raw }
                if reaped == 0 { return nil }
                if errno == EINTR { continue }
                // ECHILD: already reaped by someone else; it is not running.
                status = -1
                return -1
            }
        }
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let executable: String
    public let code: Int32
    public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
}
