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

    @Test func standardErrorGoesToAFileOfItsOwnWhenGivenOne() throws {
        let log = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        let errors = log + ".err"
        defer { unlink(log); unlink(errors) }
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2"], logPath: log,
                                     errorLogPath: errors)
        child.waitUntilExit()
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\n")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "err\n")
    }

    /// A child that reads its input to the end runs until the test closes it, and then stops.
    @Test func aChildReadingAPipedInputStopsWhenTheInputIsClosed() throws {
        let log = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        defer { unlink(log) }
        let reader = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo started; cat; echo ended"], logPath: log,
                                      standardInput: .pipe)
        #expect(reader.waitForOutput(within: 10) { $0.contains("started") ? true : nil } == true)
        usleep(100_000)
        #expect(reader.isRunning, "the input is still open")
        reader.closeStandardInput()
        let status = reader.waitUntilExit()
        #expect(status == 0)
        #expect(reader.output() == "started\nended\n")
        reader.closeStandardInput()   // a second time: nothing
    }

    @Test func waitingForOutputEndsWithTheChild() throws {
        let log = NSTemporaryDirectory() + "child-\(UUID().uuidString).log"
        defer { unlink(log) }
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo port=41; exit 0"], logPath: log)
        #expect(child.waitForOutput(within: 10) { $0.range(of: "port=").map { _ in 41 } } == 41)
        let silent = try ChildProcess(executable: "/bin/true", arguments: [], logPath: "/dev/null")
        let started = Date()
        #expect(silent.waitForOutput(within: 30) { $0.isEmpty ? nil : 1 } == nil)
        #expect(Date().timeIntervalSince(started) < 10, "given up when the child exited, not at the deadline")
    }

    @Test func aToolRunToItsEndGivesItsStatusAndOutput() throws {
        let done = try ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 4"])
        #expect(done.status >> 8 == 4)
        #expect(done.output == "out\nerr\n")
        #expect(try ChildProcess.run("/bin/true", []).status == 0)
    }

    @Test func aMissingExecutableIsRefused() {
        #expect(throws: ChildProcessError.self) {
            _ = try ChildProcess(executable: "/nonexistent/binary", arguments: [], logPath: "/dev/null")
        }
    }
}
