// A child process that the tests start and reap themselves, by PID: `posix_spawn`, output to a
// file, `waitpid` on that PID only. Foundation's `Process` reaps its children through a
// process-wide SIGCHLD watcher shared with everything else in the test process; under the
// parallel tests a child killed there was once never seen to exit, and a test waiting for it
// (on one of the two threads of the concurrency pool) hung the whole run. Nothing here depends
// on a signal being noticed.
//
// Every test that starts a program goes through here, whether it runs a tool to its end (`run`:
// openssl) or keeps a server beside it (a bangbang binary, nats-server, a Python peer).
import Glibc
import Synchronization

public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Where standard output (and, unless it has a file of its own, standard error) goes.
    public let logPath: String
    /// The wait status, once reaped.
    private let status = Mutex<Int32?>(nil)
    /// The write end of the child's standard input, while it is a pipe still open.
    private let input = Mutex<Int32?>(nil)

    /// What the child reads on standard input.
    public enum StandardInput: Sendable {
        /// The test process's own.
        case inherited
        /// A pipe that only this object writes to, held open until `closeStandardInput()`: a
        /// child that reads it to the end (a peer that must not outlive its test) then stops.
        case pipe
    }

    /// Starts `executable` with `arguments`, standard output and error appended to `logPath`
    /// (standard error to `errorLogPath` instead, if given), the environment inherited.
    public init(executable: String, arguments: [String], logPath: String, errorLogPath: String? = nil,
                standardInput: StandardInput = .inherited) throws(ChildProcessError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Close-on-exec, so no other child spawned meanwhile holds the write end open: the
        // child sees the end of its input only once every copy of that end is closed.
        var pipeEnds: [Int32] = [-1, -1]
        if case .pipe = standardInput {
            guard Self.pipe2(&pipeEnds, O_CLOEXEC) == 0 else { throw ChildProcessError(executable: executable, code: errno) }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], 0)
        }
        defer { if pipeEnds[0] >= 0 { close(pipeEnds[0]) } }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let errorLogPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorLogPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
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
        guard result == 0 else {
            if pipeEnds[1] >= 0 { close(pipeEnds[1]) }
            throw ChildProcessError(executable: executable, code: result)
        }
        pid = child
        self.logPath = logPath
        if pipeEnds[1] >= 0 { input.withLock { $0 = pipeEnds[1] } }
    }

    deinit { closeStandardInput() }

    /// Runs `executable` to its end, as a tool is run (openssl): its wait status, 0 only for an
    /// exit with status 0, and what it wrote on standard output and error together.
    public static func run(_ executable: String, _ arguments: [String]) throws(ChildProcessError) -> Completion {
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(directory)/bangbang-child-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw ChildProcessError(executable: executable, code: errno) }
        close(descriptor)
        let log = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(log) }
        let child = try ChildProcess(executable: executable, arguments: arguments, logPath: log)
        let status = child.waitUntilExit()
        return Completion(status: status, output: child.output())
    }

    public struct Completion: Sendable {
        /// The wait status: 0 only for an exit with status 0.
        public let status: Int32
        public let output: String
    }

    /// What the child has written to its log so far.
    public func output() -> String {
        guard let file = fopen(logPath, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits up to `seconds` for `find` to find what it looks for in the log, reading it again
    /// every 20 ms; nil once the time is up, or once the child has exited without writing it.
    public func waitForOutput<Value>(within seconds: Double, _ find: (String) -> Value?) -> Value? {
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let deadline = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 + seconds
        while true {
            let wasRunning = isRunning
            if let found = find(output()) { return found }
            clock_gettime(CLOCK_MONOTONIC, &clock)
            guard wasRunning, Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 < deadline else { return nil }
            usleep(20_000)
        }
    }

    /// Closes the child's standard input pipe (once; nothing for an inherited input).
    public func closeStandardInput() {
        input.withLock { end in
            if let descriptor = end { close(descriptor) }
            end = nil
        }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the Glibc module does not
    /// declare.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// glibc's `pipe2`, which the Glibc module does not declare either: a pipe made close-on-exec
    /// at once, with no moment in which another thread's child could inherit it.
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private static let pipe2: Pipe2 = unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2")!, to: Pipe2.self)

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
