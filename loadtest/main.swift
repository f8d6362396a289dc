// loadtest: the Bangbang load-test driver. See `loadtest --help` and the scenario files.
import BangbangProtocol
import Foundation
import Glibc
import SocketServer
import WebSocketProtocol

signal(SIGPIPE, SIG_IGN)
let descriptorLimit = ProcessResources.raiseDescriptorLimit()
let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("loadtest: \(message)\n".utf8))
    exit(status)
}

let command: Command
do {
    command = try ArgumentParser.parse(arguments, cores: ProcessInfo.processInfo.activeProcessorCount)
} catch {
    fail("\(error)", status: 2)
}

switch command {
case .help(let scenario):
    print(ArgumentParser.usage(for: scenario))

case .compare(let first, let second):
    do {
        let a = try ResultFile.loadMetrics(first)
        let b = try ResultFile.loadMetrics(second)
        print(Report.comparison(a, b, firstName: first, secondName: second))
    } catch {
        fail("\(error)", status: 2)
    }

case .run(let options):
    let result: RunResult
    if options.processes > 1, options.processCount == 1 {
        do { result = try ProcessSplitter.run(options, arguments: arguments) } catch { fail("\(error)", status: 1) }
    } else {
        let needed = options.share(of: max(options.connections, options.runners + options.effectivePublishers)) + 64
        if needed > descriptorLimit {
            fail("this process may open \(descriptorLimit) files but the run needs about \(needed); "
                 + "split it with --processes \((needed * options.processCount + descriptorLimit - 1) / descriptorLimit + 1)",
                 status: 2)
        }
        do { result = try ScenarioRunner.run(options) } catch { fail("\(error)", status: 1) }
    }
    if let path = options.jsonPath {
        do { try ResultFile.save(result, to: path) } catch { fail("cannot write \(path): \(error)", status: 1) }
    }
    if options.processCount == 1 { print(Report.summary(of: result)) }
    exit(result.violations.isEmpty ? 0 : 1)
}
