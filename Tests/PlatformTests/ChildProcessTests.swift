import Foundation
import Glibc
import Testing
import TestSupport

@Suite struct ChildProcessTests {
    @Test func anExitStatusAndTheOutputAreKept() throws {
        let log = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        defer { unlink(log) }
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"], logPath: log)
        let status = child.waitUntilExit()
        #expect(status >> 8 == 3 && status & 0x7f == 0, "exited with 3")
        #expect(!child.isRunning)
        #expect(child.waitUntilExit() == status, "reaped once, remembered after")
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\n")
    }

    @Test func aKilledChildIsSeenToDieOfTheSignal() throws {
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["30"], logPath: "/dev/null")
        #expect(child.isRunning)
        child.signal(SIGKILL)
        #expect(child.waitUntilExit() & 0x7f == SIGKILL)
        child.signal(SIGKILL)   // after the reap: nothing is sent (the PID may belong to another process now)
    }

    @Test func theChildInheritsNoDescriptorBeyondItsOutput() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)   // without close-on-exec, as Foundation's own are
        defer { close(ends[0]); close(ends[1]) }
        let log = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        defer { unlink(log) }
        let check = "for n in \(ends[0]) \(ends[1]); do [ -e /proc/self/fd/$n ] && echo open || echo closed; done"
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", check], logPath: log)
        child.waitUntilExit()
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "closed\nclosed\n")
    }

    @Test func theChildStartsWithNoSignalBlockedWhateverTheSpawningThreadBlocks() async throws {
        let log = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        defer { unlink(log) }
        // Spawned from a thread that blocks SIGTERM, as Dispatch's workers block signals.
        let child = try await offThePool { () throws -> ChildProcess in
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            var previous = sigset_t()
            pthread_sigmask(SIG_BLOCK, &blocked, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            return try ChildProcess(executable: "/bin/grep", arguments: ["SigBlk", "/proc/self/status"], logPath: log)   // not through a shell: it unblocks
        }
        child.waitUntilExit()
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "SigBlk:\t0000000000000000\n")
    }

    @Test func aMissingExecutableIsRefused() {
        #expect(throws: ChildProcessError.self) {
            _ = try ChildProcess(executable: "/nonexistent/binary", arguments: [], logPath: "/dev/null")
        }
    }
}
