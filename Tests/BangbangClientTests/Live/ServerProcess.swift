// A real `bangbang` server as a child process, for the tests that drive it through the library:
// `.build/debug/bangbang` (or $BANGBANG_BINARY), on a free loopback port, with its own data
// directory; stopped by PID (SIGTERM, then SIGKILL if it lingers), restartable on the same port
// and data.
import Foundation
import Glibc
import TestSupport

final class ServerProcess: @unchecked Sendable {
    // Confinement: used by one test at a time (the live suites are serialized).
    struct SetupError: Error, CustomStringConvertible { var description: String }

    static var packageRoot: URL { ProtocolExamples.packageRoot }

    static var binary: String {
        if let explicit = ProcessInfo.processInfo.environment["BANGBANG_BINARY"], !explicit.isEmpty { return explicit }
        return packageRoot.appendingPathComponent(".build/debug/bangbang").path
    }

    /// What every live test needs: SMS codes in replies, no disk syncs, and no limits that a test
    /// logging in many users from one address would trip.
    static let testArguments = ["--dev", "--fsync", "never", "--sms-per-ip-hourly", "0", "--requests-per-second", "0",
                                "--user-requests-per-second", "0", "--handshakes-per-second-per-address", "0"]

    let directory: URL
    let arguments: [String]
    private(set) var process: ChildProcess
    private(set) var port: Int

    var dataDirectory: URL { directory.appendingPathComponent("data") }
    var logURL: URL { directory.appendingPathComponent("server.log") }
    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }
    var adminSecret: String {
        get throws {
            try String(contentsOf: dataDirectory.appendingPathComponent("admin-secret"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    private init(directory: URL, arguments: [String], process: ChildProcess, port: Int) {
        self.directory = directory
        self.arguments = arguments
        self.process = process
        self.port = port
    }

    static func start(_ extraArguments: [String] = []) throws -> ServerProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let arguments = testArguments + extraArguments
        let (process, port) = try launch(in: directory, arguments: arguments, port: 0)
        return ServerProcess(directory: directory, arguments: arguments, process: process, port: port)
    }

    private static func launch(in directory: URL, arguments: [String], port: Int) throws -> (ChildProcess, Int) {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw SetupError(description: "no server binary at \(binary): run `swift build` first (or set BANGBANG_BINARY)")
        }
        let logURL = directory.appendingPathComponent("server.log")
        let previous = (try? Data(contentsOf: logURL).count) ?? 0
        let process = try ChildProcess(executable: binary,
                                       arguments: ["--host", "127.0.0.1", "--port", String(port),
                                                   "--data-dir", directory.appendingPathComponent("data").path] + arguments,
                                       logPath: logURL.path)

        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = String(decoding: (try? Data(contentsOf: logURL))?.dropFirst(previous) ?? Data(), as: UTF8.self)
            if let range = text.range(of: "event=listening "), let line = text[range.lowerBound...].split(separator: "\n").first,
               let portField = line.split(separator: " ").first(where: { $0.hasPrefix("port=") }),
               let bound = Int(portField.dropFirst(5)) {
                return (process, bound)
            }
            if !process.isRunning {
                throw SetupError(description: "the server exited with wait status \(process.waitUntilExit()):\n\(text)")
            }
            usleep(20_000)
        }
        process.signal(SIGKILL)
        process.waitUntilExit()
        throw SetupError(description: "the server did not start listening within 30 s")
    }

    /// SIGTERM (clients are told 1001) and wait for the exit.
    func stop() {
        guard process.isRunning else { return }
        process.signal(SIGTERM)
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the server and starts it again on the same port with the same data.
    func restart() throws {
        stop()
        var lastError: (any Error)?
        // The port was just released; another process could take it in between, so retry briefly.
        for _ in 0..<20 {
            do {
                (process, port) = try Self.launch(in: directory, arguments: arguments, port: port)
                return
            } catch {
                lastError = error
                usleep(100_000)
            }
        }
        throw lastError ?? SetupError(description: "restart failed")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
