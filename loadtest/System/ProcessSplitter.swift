// A multi-process run: the parent re-executes itself once per share of the work, lines the
// children up between their connect phase and their measured phase, and merges their results.
//
// Each child gets the parent's arguments minus --processes/--json/--quiet, plus its index, the
// count, a private --json file and --quiet. The children print their own failures on the
// shared standard error; standard input and output carry the ready/go handshake.
import Foundation
import Glibc

enum ProcessSplitter {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func childArguments(from arguments: [String], index: Int, count: Int, jsonPath: String) -> [String] {
        var result: [String] = []
        var position = 0
        while position < arguments.count {
            let argument = arguments[position]
            position += 1
            if ["--processes", "--json"].contains(argument) {
                position += 1  // and its value
                continue
            }
            if argument.hasPrefix("--processes=") || argument.hasPrefix("--json=") || argument == "--quiet" { continue }
            result.append(argument)
        }
        result += ["--process-index", String(index), "--process-count", String(count), "--json", jsonPath, "--quiet"]
        return result
    }

    static func run(_ options: Options, arguments: [String]) throws(Failure) -> RunResult {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let directory = FileManager.default.temporaryDirectory.path
        let rssBefore = options.serverPID.flatMap(ProcessResources.residentKiB(of:))
        var children: [(process: Process, input: Pipe, output: Pipe, jsonPath: String)] = []
        let start = MonotonicClock.nanoseconds()
        for index in 0..<options.processes {
            let jsonPath = "\(directory)/loadtest-\(getpid())-\(index).json"
            let process = Process()
            process.executableURL = executable
            process.arguments = childArguments(from: arguments, index: index, count: options.processes, jsonPath: jsonPath)
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            do { try process.run() } catch {
                throw Failure(description: "cannot start child process \(index): \(error)")
            }
            children.append((process, input, output, jsonPath))
        }
        FileHandle.standardError.write(Data("loadtest: \(options.processes) processes started; waiting until all are connected\n".utf8))
        for (index, child) in children.enumerated() {
            guard readLine(from: child.output.fileHandleForReading) == ChildCoordinator.readyLine else {
                for other in children where other.process.isRunning { other.process.terminate() }
                throw Failure(description: "child process \(index) ended before it was ready")
            }
        }
        let readySeconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        usleep(500_000)
        let rssAfter = options.serverPID.flatMap(ProcessResources.residentKiB(of:))
        FileHandle.standardError.write(Data("loadtest: all processes ready after \(Report.format(readySeconds)) s; measuring\n".utf8))
        for child in children {
            child.input.fileHandleForWriting.write(Data((ChildCoordinator.goLine + "\n").utf8))
        }
        var merged = RunResult(scenario: options.scenario.rawValue)
        var failures: [String] = []
        for (index, child) in children.enumerated() {
            child.process.waitUntilExit()
            defer { try? FileManager.default.removeItem(atPath: child.jsonPath) }
            guard let data = FileManager.default.contents(atPath: child.jsonPath) else {
                failures.append("child \(index) exited with status \(child.process.terminationStatus) and wrote no result")
                continue
            }
            do {
                let json = try JSONParserFacade.parse(Array(data))
                merged.merge(try RunResult(json: json))
            } catch {
                failures.append("child \(index): \(error)")
            }
        }
        if !failures.isEmpty { throw Failure(description: failures.joined(separator: "; ")) }
        if options.scenario == .connections {
            let opened = Int(merged.counters["connections_opened"] ?? 0)
            // The slowest child's connect phase: process start-up is not the server's cost.
            let connectSeconds = merged.gauges["connect_phase_seconds"] ?? readySeconds
            merged.gauges["connects_per_second"] = Double(opened) / max(connectSeconds, 1e-9)
            merged.gauges["server_rss_per_connection_kib"] = nil
            ConnectionsScenario.recordServerMemory(into: &merged, before: rssBefore, after: rssAfter, connections: opened)
        }
        merged.parameters["processes"] = String(options.processes)
        return merged
    }

    /// One line from a pipe, without its newline; nil at end of file.
    private static func readLine(from handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            let data = handle.readData(ofLength: 1)
            guard let byte = data.first else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}
